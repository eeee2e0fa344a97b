/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com, spec/standard-webhooks.md):
 * `webhook-signature: v1,<base64 HMAC-SHA256 of "{id}.{timestamp}.{body}">`, keyed with the
 * base64-decoded part of a `whsec_` secret.
 */

import { fromBase64, toBase64 } from "../lib/crypto";

export const SECRET_PREFIX = "whsec_";
/** Secret key length the specification allows: 24 to 64 bytes. */
export const SECRET_MIN_BYTES = 24;
export const SECRET_MAX_BYTES = 64;

/** A new signing secret: `whsec_` + base64 of 32 random bytes. */
export function generateSigningSecret(): string {
  return SECRET_PREFIX + toBase64(crypto.getRandomValues(new Uint8Array(32)));
}

/** The key bytes of a `whsec_` secret, or undefined when it is not one (wrong prefix, not base64, wrong length). */
export function signingKeyOf(secret: string): Uint8Array<ArrayBuffer> | undefined {
  if (!secret.startsWith(SECRET_PREFIX)) return undefined;
  const encoded = secret.slice(SECRET_PREFIX.length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) return undefined;
  let key: Uint8Array<ArrayBuffer>;
  try {
    key = fromBase64(encoded);
  } catch {
    return undefined;
  }
  return key.length >= SECRET_MIN_BYTES && key.length <= SECRET_MAX_BYTES ? key : undefined;
}

/** The headers of one attempt: the same `webhook-id` on every attempt, a fresh timestamp and signature. */
export async function signedHeaders(
  secret: string,
  message: { id: string; timestamp: number; body: string },
): Promise<Record<string, string>> {
  const keyBytes = signingKeyOf(secret);
  if (!keyBytes) throw new Error("not a whsec_ signing secret");
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const content = new TextEncoder().encode(`${message.id}.${message.timestamp}.${message.body}`);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, content));
  return {
    "webhook-id": message.id,
    "webhook-timestamp": String(message.timestamp),
    "webhook-signature": `v1,${toBase64(mac)}`,
  };
}
