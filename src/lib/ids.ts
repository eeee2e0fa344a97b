const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** A random identifier from a CSPRNG, base62, `length` characters (default 16 ≈ 95 bits). */
export function randomId(length = 16): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length * 2));
  let out = "";
  for (const b of bytes) {
    // 248 = 62 * 4: reject the tail so every character is equally likely.
    if (b < 248) out += ALPHABET[b % 62];
    if (out.length === length) return out;
  }
  return out + randomId(length - out.length);
}
