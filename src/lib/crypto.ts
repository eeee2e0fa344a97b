/** Hex SHA-256 digest of a string: how secrets that are only verified (API keys) are stored. */
export async function sha256Hex(value: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(value));
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
}

/** Constant-time comparison of two strings of equal length (different lengths compare unequal). */
export function timingSafeEqual(a: string, b: string): boolean {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  if (ea.length !== eb.length) return false;
  let diff = 0;
  for (let i = 0; i < ea.length; i++) diff |= ea[i]! ^ eb[i]!;
  return diff === 0;
}

/** Standard base64 of bytes. */
export function toBase64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

/** Bytes of standard base64 text (throws on text that is not base64). */
export function fromBase64(value: string): Uint8Array<ArrayBuffer> {
  const s = atob(value);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * Envelope of a secret at rest: AES-256-GCM ciphertext, its IV, and the id of the key that
 * sealed it, so keys can be rotated (add a new first key, keep the old ones to decrypt).
 */
export interface SealedSecret {
  kid: string;
  iv: string;
  ct: string;
}

/** The keys of ENCRYPTION_KEYS ("kid:base64,kid:base64"); the first one encrypts. */
export class SecretBox {
  private readonly keys: Map<string, Promise<CryptoKey>>;
  private readonly current: string;

  constructor(spec: string) {
    const entries = spec
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .map((entry) => {
        const at = entry.indexOf(":");
        if (at <= 0) throw new Error("ENCRYPTION_KEYS entries must be kid:base64key");
        const raw = fromBase64(entry.slice(at + 1));
        if (raw.length !== 32) throw new Error("ENCRYPTION_KEYS keys must be 32 bytes (AES-256)");
        const key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
        return [entry.slice(0, at), key] as const;
      });
    if (entries.length === 0) throw new Error("ENCRYPTION_KEYS is empty");
    this.keys = new Map(entries);
    this.current = entries[0]![0];
  }

  /** Encrypts a JSON-serialisable value; `aad` binds the ciphertext to its owner (e.g. a row id). */
  async seal(value: unknown, aad: string): Promise<SealedSecret> {
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const key = await this.keys.get(this.current)!;
    const ct = await crypto.subtle.encrypt(
      { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(aad) },
      key,
      new TextEncoder().encode(JSON.stringify(value)),
    );
    return { kid: this.current, iv: toBase64(iv), ct: toBase64(new Uint8Array(ct)) };
  }

  async open<T = unknown>(sealed: SealedSecret, aad: string): Promise<T> {
    const key = this.keys.get(sealed.kid);
    if (!key) throw new Error(`no encryption key with id ${sealed.kid}`);
    const pt = await crypto.subtle.decrypt(
      { name: "AES-GCM", iv: fromBase64(sealed.iv), additionalData: new TextEncoder().encode(aad) },
      await key,
      fromBase64(sealed.ct),
    );
    return JSON.parse(new TextDecoder().decode(pt)) as T;
  }
}

let boxCache: { spec: string; box: SecretBox } | undefined;
/** The SecretBox of a key specification, built once per isolate. */
export function secretBox(spec: string): SecretBox {
  if (boxCache?.spec !== spec) boxCache = { spec, box: new SecretBox(spec) };
  return boxCache.box;
}
