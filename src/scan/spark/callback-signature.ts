/**
 * The Spark callback's signature (docs/resources/light-and-full-scans.md, "The callback"): the
 * driver sends `X-DQ-Timestamp: <unix seconds>` and `X-DQ-Signature: v1=<hex HMAC-SHA256 of "<timestamp>.<body>">`,
 * keyed with the job's own secret. spark/dq_profile.py signs the same way; both sides are tested
 * against spark/testdata/callback-vector.json.
 */

import { timingSafeEqual, toBase64 } from "../../lib/crypto";

/** How far a callback's timestamp may be from now, either way. */
export const CALLBACK_TOLERANCE_SECONDS = 300;

/** A fresh per-job secret: 32 random bytes, base64url, with a prefix that says what it is. */
export function newCallbackSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return `dqcb_${toBase64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")}`;
}

/** `v1=<hex>` for a timestamp and the body's exact text. */
export async function callbackSignature(secret: string, timestamp: string, body: string): Promise<string> {
  const enc = new TextEncoder();
  const key = await crypto.subtle.importKey("raw", enc.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, enc.encode(`${timestamp}.${body}`)));
  return `v1=${[...mac].map((b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export type CallbackCheck = "ok" | "malformed" | "stale" | "forged";

/** Checks a callback's headers against the job's secret: timestamp window first, then the HMAC. */
export async function checkCallbackSignature(
  secret: string,
  headers: { timestamp?: string | undefined; signature?: string | undefined },
  body: string,
  nowSeconds: number,
): Promise<CallbackCheck> {
  const { timestamp, signature } = headers;
  if (!timestamp || !signature || !/^\d{1,12}$/.test(timestamp)) return "malformed";
  if (Math.abs(nowSeconds - Number(timestamp)) > CALLBACK_TOLERANCE_SECONDS) return "stale";
  const expected = await callbackSignature(secret, timestamp, body);
  return timingSafeEqual(expected, signature.trim().toLowerCase()) ? "ok" : "forged";
}
