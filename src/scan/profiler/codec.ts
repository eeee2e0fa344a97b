/** Compact JSON-safe encoding of typed arrays (base64 of their little-endian bytes). */

/** Encodes the bytes of a typed array as base64. */
export function bytesToBase64(view: ArrayBufferView): string {
  const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  let binary = "";
  // Chunked so the argument list of fromCharCode stays small.
  for (let i = 0; i < bytes.length; i += 0x8000) {
    binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000) as unknown as number[]);
  }
  return btoa(binary);
}

/** Decodes base64 into fresh bytes. */
export function base64ToBytes(text: string): Uint8Array {
  const binary = atob(text);
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** Decodes base64 produced from a Float64Array. */
export function base64ToFloat64(text: string): Float64Array {
  const bytes = base64ToBytes(text);
  return new Float64Array(bytes.buffer, 0, bytes.length >> 3);
}

/** Decodes base64 produced from an Int32Array. */
export function base64ToInt32(text: string): Int32Array {
  const bytes = base64ToBytes(text);
  return new Int32Array(bytes.buffer, 0, bytes.length >> 2);
}
