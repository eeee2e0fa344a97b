/**
 * SigV4 ("Authenticating requests (AWS Signature Version 4)") as AWS checks it, with the body's
 * own hash: the Redshift Data API fake's authentication.
 */

import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingMessage } from "node:http";

const sha256Hex = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Why AWS would refuse the request's signature, as its error (status, __type, message); undefined if it would not. */
export function checkSigV4(
  req: IncomingMessage,
  body: Buffer,
  account: { accessKeyId: string; secretAccessKey: string; region: string; service: string },
): { status: number; type: string; message: string } | undefined {
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      req.headers.authorization ?? "",
    );
  if (!m) return { status: 400, type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" };
  const [, keyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== account.accessKeyId) {
    return {
      status: 400,
      type: "UnrecognizedClientException",
      message: "The security token included in the request is invalid.",
    };
  }
  if (region !== account.region || service !== account.service) {
    return {
      status: 400,
      type: "InvalidSignatureException",
      message: `Credential should be scoped to a valid region and service ${account.service}.`,
    };
  }
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!amzDate.startsWith(date!) || !(Math.abs(Date.now() - signedAt) < 5 * 60 * 1000)) {
    return { status: 400, type: "InvalidSignatureException", message: "Signature expired." };
  }
  const names = signedHeaders!.split(";");
  for (const h of ["host", "x-amz-date", "x-amz-target"]) {
    if (!names.includes(h)) return { status: 400, type: "InvalidSignatureException", message: `${h} must be signed` };
  }
  const url = new URL(req.url ?? "/", "http://placeholder");
  const canonicalUri = url.pathname
    .split("/")
    .map((seg) => rfc3986(rfc3986(decodeURIComponent(seg))))
    .join("/");
  const canonicalHeaders = names
    .map(
      (n) =>
        `${n}:${String(req.headers[n] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const canonicalRequest = [req.method, canonicalUri, "", canonicalHeaders, signedHeaders, sha256Hex(body)].join("\n");
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${account.secretAccessKey}`, date!), region!), service!), "aws4_request");
  const expected = createHmac("sha256", key).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, "hex"))) {
    return {
      status: 400,
      type: "InvalidSignatureException",
      message: "The request signature we calculated does not match the signature you provided.",
    };
  }
  return undefined;
}
