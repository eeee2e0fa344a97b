import { type ChildProcess, spawn } from "node:child_process";
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from "node:http";
import { createRequire } from "node:module";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { AwsClient } from "aws4fetch";
import { decodeProtectedHeader, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import type { TestProject } from "vitest/node";
import { type GcsTestAccount, type ObjectStoreServers, seedObjects } from "../scan/connectors/fixtures";

declare module "vitest" {
  export interface ProvidedContext {
    /** Real object-store servers seeded with the objects of test/scan/connectors/fixtures.ts. */
    objectStores: ObjectStoreServers;
  }
}

const require = createRequire(import.meta.url);
const HOST = "127.0.0.1";

/**
 * Runs in Node before the tests: s3rver behind a SigV4-checking front, Azurite (blob), and a
 * fake GCS that checks service-account assertions and bearer tokens as Google documents them.
 */
export default async function setup(project: TestProject) {
  const cleanups: (() => Promise<unknown>)[] = [];
  const teardown = async () => {
    for (const clean of cleanups.reverse()) await clean().catch(() => {});
  };
  try {
    const objects = seedObjects();
    const s3 = await startS3(objects, cleanups);
    const azure = await startAzurite(objects, cleanups);
    const gcs = await startFakeGcs(objects, cleanups);
    project.provide("objectStores", { s3, azure, gcs, closedPort: await closedPort() });
  } catch (err) {
    await teardown();
    throw err;
  }
  return teardown;
}

// ---------------------------------------------------------------------------------------------
// Helpers

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, HOST, resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A port that was free a moment ago and is closed now: connections to it are refused. */
const closedPort = freePort;

function listen(server: Server): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, HOST, () => resolve((server.address() as { port: number }).port));
  });
}

const closeServer = (server: Server) =>
  new Promise<void>((resolve) => {
    server.closeAllConnections();
    server.close(() => resolve());
  });

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A Node server in a child process, stopped (by its own handle) at teardown. */
function spawnServer(name: string, args: string[]) {
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  return {
    assertRunning() {
      if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}): ${stderr}`);
    },
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Polls until `probe` resolves (the server answers), failing after `timeoutMs`. */
async function waitUntilReady(what: string, probe: () => Promise<unknown>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      await probe();
      return;
    } catch (err) {
      lastError = err;
      // Polling interval, not a test delay: the server is still starting.
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  throw new Error(`${what} did not become ready: ${String(lastError)}`);
}

async function expectOk(res: Response, what: string): Promise<void> {
  if (!res.ok) throw new Error(`${what}: ${res.status} ${await res.text()}`);
}

const sha256Hex = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data).digest();

/** RFC 3986 encoding, as SigV4's canonical form wants it. */
const rfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

// ---------------------------------------------------------------------------------------------
// S3: s3rver (which does not check SigV4 signatures) behind a front that does, per the AWS docs
// "Authenticating requests (AWS Signature Version 4)": a wrong secret must fail as on AWS.

async function startS3(objects: Map<string, Uint8Array>, cleanups: (() => Promise<unknown>)[]) {
  const region = "eu-central-1";
  const bucket = "dq-test-bucket";
  const accessKeyId = "AKIADQTESTKEY0000001";
  const secretAccessKey = randomBytes(30).toString("base64");
  const directory = await mkdtemp(join(tmpdir(), "s3rver-"));
  cleanups.push(() => rm(directory, { recursive: true, force: true }));

  // s3rver's continuation tokens use DES, which Node 22's OpenSSL serves only with the legacy
  // provider: it runs in a child process started with that flag.
  const s3rverPort = await freePort();
  const bin = join(dirname(require.resolve("s3rver/package.json")), "bin/s3rver.js");
  const child = spawnServer("s3rver", [
    "--openssl-legacy-provider",
    bin,
    "-d",
    directory,
    "-a",
    HOST,
    "-p",
    String(s3rverPort),
    "--silent",
    "--configure-bucket",
    bucket,
  ]);
  cleanups.push(child.stop);

  const server = createServer((req, res) => {
    const refusal = checkSigV4(req, { accessKeyId, secretAccessKey, region });
    if (refusal) {
      res.writeHead(403, { "content-type": "application/xml" });
      res.end(
        `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${refusal.code}</Code><Message>${refusal.message}</Message></Error>`,
      );
      return;
    }
    // s3rver knows only its own dummy account: the request was checked here, so it goes on unsigned.
    const headers = { ...req.headers };
    delete headers.authorization;
    const upstream = httpRequest(
      { host: HOST, port: s3rverPort, method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  const port = await listen(server);
  cleanups.push(() => closeServer(server));
  const endpoint = `http://${HOST}:${port}`;

  const client = new AwsClient({ accessKeyId, secretAccessKey, service: "s3", region, retries: 0 });
  await waitUntilReady("s3rver", async () => {
    child.assertRunning();
    await expectOk(await client.fetch(`${endpoint}/${bucket}?list-type=2`), "list");
  });
  for (const [key, body] of objects) {
    const url = `${endpoint}/${bucket}/${key.split("/").map(rfc3986).join("/")}`;
    await expectOk(await client.fetch(url, { method: "PUT", body }), `PUT ${key}`);
  }
  return { endpoint, region, bucket, accessKeyId, secretAccessKey };
}

/** Checks an Authorization: AWS4-HMAC-SHA256 header; returns the S3 error to answer, if any. */
function checkSigV4(
  req: IncomingMessage,
  account: { accessKeyId: string; secretAccessKey: string; region: string },
): { code: string; message: string } | undefined {
  const auth = req.headers.authorization ?? "";
  const m =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      auth,
    );
  if (!m) return { code: "AccessDenied", message: "Access Denied" };
  const [, keyId, date, region, service, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== account.accessKeyId) {
    return { code: "InvalidAccessKeyId", message: "The AWS Access Key Id you provided does not exist in our records." };
  }
  if (region !== account.region || service !== "s3") {
    return {
      code: "AuthorizationHeaderMalformed",
      message: `the region '${region}' is wrong; expecting '${account.region}'`,
    };
  }
  const amzDate = String(req.headers["x-amz-date"] ?? "");
  const signedAt = Date.parse(amzDate.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, "$1-$2-$3T$4:$5:$6Z"));
  if (!amzDate.startsWith(date!) || !(Math.abs(Date.now() - signedAt) < 15 * 60 * 1000)) {
    return {
      code: "RequestTimeTooSkewed",
      message: "The difference between the request time and the current time is too large.",
    };
  }
  const names = signedHeaders!.split(";");
  if (!names.includes("host") || !names.includes("x-amz-date")) {
    return { code: "AccessDenied", message: "host and x-amz-date must be signed" };
  }
  const url = new URL(req.url ?? "/", "http://placeholder");
  const canonicalUri = url.pathname
    .split("/")
    .map((seg) => rfc3986(decodeURIComponent(seg)))
    .join("/");
  const rawQuery = (req.url ?? "").includes("?") ? (req.url ?? "").slice((req.url ?? "").indexOf("?") + 1) : "";
  const canonicalQuery = rawQuery
    .split("&")
    .filter(Boolean)
    .map((pair) => {
      const eq = pair.indexOf("=");
      const k = eq < 0 ? pair : pair.slice(0, eq);
      const v = eq < 0 ? "" : pair.slice(eq + 1);
      return [rfc3986(decodeURIComponent(k)), rfc3986(decodeURIComponent(v))] as const;
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
  const canonicalHeaders = names
    .map(
      (name) =>
        `${name}:${String(req.headers[name] ?? "")
          .trim()
          .replace(/\s+/g, " ")}\n`,
    )
    .join("");
  const payloadHash = String(req.headers["x-amz-content-sha256"] ?? "UNSIGNED-PAYLOAD");
  const canonicalRequest = [
    req.method,
    canonicalUri,
    canonicalQuery,
    canonicalHeaders,
    signedHeaders,
    payloadHash,
  ].join("\n");
  const scope = `${date}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", amzDate, scope, sha256Hex(canonicalRequest)].join("\n");
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${account.secretAccessKey}`, date!), region!), "s3"), "aws4_request");
  const expected = createHmac("sha256", signingKey).update(stringToSign).digest();
  if (!timingSafeEqual(expected, Buffer.from(signature!, "hex"))) {
    return {
      code: "SignatureDoesNotMatch",
      message: "The request signature we calculated does not match the signature you provided.",
    };
  }
  return undefined;
}

// ---------------------------------------------------------------------------------------------
// Azure: Azurite's blob service, with SAS tokens signed by the well-known development key.

const AZURITE_ACCOUNT = "devstoreaccount1";
// Azurite's published development key (docs: "Use the Azurite emulator"), not a secret.
const AZURITE_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
const SAS_VERSION = "2021-08-06";

const sasTime = (d: Date) => `${d.toISOString().slice(0, 19)}Z`;

/** An account SAS (docs: "Create an account SAS", version 2020-12-06 and later). */
function accountSas(permissions: string, expiry: Date): string {
  const fields = { sv: SAS_VERSION, ss: "b", srt: "sco", sp: permissions, se: sasTime(expiry), spr: "https,http" };
  const stringToSign = [
    AZURITE_ACCOUNT,
    fields.sp,
    fields.ss,
    fields.srt,
    "",
    fields.se,
    "",
    fields.spr,
    fields.sv,
    "",
    "",
  ].join("\n");
  const sig = createHmac("sha256", Buffer.from(AZURITE_KEY, "base64")).update(stringToSign, "utf8").digest("base64");
  return new URLSearchParams({ ...fields, sig }).toString();
}

/** A service SAS on a container (docs: "Create a service SAS", version 2020-12-06 and later). */
function containerSas(container: string, permissions: string, expiry: Date, key = AZURITE_KEY): string {
  const fields = { sv: SAS_VERSION, sr: "c", sp: permissions, se: sasTime(expiry), spr: "https,http" };
  const stringToSign = [
    fields.sp,
    "", // signedStart
    fields.se,
    `/blob/${AZURITE_ACCOUNT}/${container}`,
    "", // signedIdentifier
    "", // signedIP
    fields.spr,
    fields.sv,
    fields.sr,
    "", // signedSnapshotTime
    "", // signedEncryptionScope
    "", // rscc
    "", // rscd
    "", // rsce
    "", // rscl
    "", // rsct
  ].join("\n");
  const sig = createHmac("sha256", Buffer.from(key, "base64")).update(stringToSign, "utf8").digest("base64");
  return new URLSearchParams({ ...fields, sig }).toString();
}

async function startAzurite(objects: Map<string, Uint8Array>, cleanups: (() => Promise<unknown>)[]) {
  const port = await freePort();
  const main = join(dirname(require.resolve("azurite/package.json")), "dist/src/blob/main.js");
  const child = spawnServer("Azurite", [
    main,
    "--blobHost",
    HOST,
    "--blobPort",
    String(port),
    "--inMemoryPersistence",
    "--disableTelemetry",
    "--skipApiVersionCheck",
    "--loose",
    "--silent",
  ]);
  cleanups.push(child.stop);
  const endpoint = `http://${HOST}:${port}/${AZURITE_ACCOUNT}`;
  const container = "dq-test";
  const hour = 60 * 60 * 1000;
  const admin = accountSas("rwdlac", new Date(Date.now() + hour));

  await waitUntilReady("Azurite", async () => {
    child.assertRunning();
    // Any HTTP answer means it listens.
    await fetch(`${endpoint}?comp=list&${admin}`);
  });
  const headers = { "x-ms-version": SAS_VERSION };
  await expectOk(
    await fetch(`${endpoint}/${container}?restype=container&${admin}`, { method: "PUT", headers }),
    "create container",
  );
  for (const [key, body] of objects) {
    const url = `${endpoint}/${container}/${key.split("/").map(rfc3986).join("/")}?${admin}`;
    const res = await fetch(url, { method: "PUT", headers: { ...headers, "x-ms-blob-type": "BlockBlob" }, body });
    await expectOk(res, `PUT ${key}`);
  }
  const later = new Date(Date.now() + 2 * hour);
  return {
    endpoint,
    account: AZURITE_ACCOUNT,
    container,
    sas: containerSas(container, "rl", later),
    forgedSas: containerSas(container, "rl", later, randomBytes(64).toString("base64")),
    expiredSas: containerSas(container, "rl", new Date(Date.now() - hour)),
    readOnlySas: containerSas(container, "r", later),
    writeSas: containerSas(container, "racwdl", later),
    missingContainer: "never-created",
    missingContainerSas: containerSas("never-created", "rl", later),
  };
}

// ---------------------------------------------------------------------------------------------
// GCS: a fake of the OAuth token endpoint and the JSON API, checking what Google checks
// ("Using OAuth 2.0 for Server to Server Applications"; Cloud Storage JSON API reference).

interface FakeAccount {
  email: string;
  keyId: string;
  publicKey: CryptoKey;
  /** Buckets this account may read. */
  buckets: Set<string>;
  /** Buckets this account may also write to (create and delete objects). */
  writable: Set<string>;
}

const READ_SCOPES = new Set([
  "https://www.googleapis.com/auth/devstorage.read_only",
  "https://www.googleapis.com/auth/devstorage.read_write",
  "https://www.googleapis.com/auth/devstorage.full_control",
  "https://www.googleapis.com/auth/cloud-platform",
]);

/** Scopes that allow creating and deleting objects (Cloud Storage "OAuth 2.0 scopes"). */
const WRITE_SCOPES = new Set([
  "https://www.googleapis.com/auth/devstorage.read_write",
  "https://www.googleapis.com/auth/devstorage.full_control",
  "https://www.googleapis.com/auth/cloud-platform",
]);

async function newServiceAccount(email: string, tokenUri: string) {
  const { publicKey, privateKey } = await generateKeyPair("RS256", { extractable: true });
  const account: GcsTestAccount = {
    client_email: email,
    private_key: await exportPKCS8(privateKey),
    private_key_id: randomBytes(20).toString("hex"),
    token_uri: tokenUri,
  };
  return { account, publicKey };
}

function gcsError(res: ServerResponse, code: number, message: string, reason: string) {
  res.writeHead(code, { "content-type": "application/json; charset=UTF-8" });
  res.end(JSON.stringify({ error: { code, message, errors: [{ message, domain: "global", reason }] } }));
}

function oauthError(res: ServerResponse, status: number, error: string, description: string) {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
  res.end(JSON.stringify({ error, error_description: description }));
}

async function startFakeGcs(objects: Map<string, Uint8Array>, cleanups: (() => Promise<unknown>)[]) {
  const bucket = "dq-test-bucket";
  const store = new Map<string, { data: Uint8Array; updated: string }>();
  const seededAt = new Date().toISOString();
  for (const [name, data] of objects) store.set(name, { data, updated: seededAt });
  const accounts = new Map<string, FakeAccount>();
  const tokens = new Map<string, { email: string; expiresAt: number; scopes: string[] }>();
  const tokenCounts = new Map<string, number>();
  let tokenUri = "";

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      if (!res.headersSent) gcsError(res, 500, String(err), "backendError");
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse) {
    const url = new URL(req.url ?? "/", `http://${req.headers.host}`);
    if (url.pathname === "/token") return token(req, res);
    if (url.pathname === "/_test/token-count") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify({ count: tokenCounts.get(url.searchParams.get("email") ?? "") ?? 0 }));
    }
    const upload = /^\/upload\/storage\/v1\/b\/([^/]+)\/o$/.exec(url.pathname);
    const m = upload ?? /^\/storage\/v1\/b\/([^/]+)\/o(?:\/(.+))?$/.exec(url.pathname);
    const method = upload ? "POST" : req.method === "DELETE" ? "DELETE" : "GET";
    if (!m || req.method !== method) return gcsError(res, 404, "Not Found", "notFound");

    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const session = bearer ? tokens.get(bearer) : undefined;
    if (!session || session.expiresAt < Date.now()) return gcsError(res, 401, "Invalid Credentials", "authError");
    const bucketName = decodeURIComponent(m[1]!);
    if (bucketName !== bucket) return gcsError(res, 404, "The specified bucket does not exist.", "notFound");
    const account = accounts.get(session.email)!;
    if (method !== "GET") {
      // Writes need a write scope on the token and the permission on the bucket.
      if (!session.scopes.some((s) => WRITE_SCOPES.has(s))) {
        return gcsError(res, 403, "Provided scope(s) are not authorized", "insufficientPermissions");
      }
      const name = upload ? url.searchParams.get("name") : decodeURIComponent(m[2] ?? "");
      const permission = upload ? "storage.objects.create" : "storage.objects.delete";
      if (!account.writable.has(bucketName)) {
        return gcsError(
          res,
          403,
          `${account.email} does not have ${permission} access to the Google Cloud Storage object. Permission '${permission}' denied on resource (or it may not exist).`,
          "forbidden",
        );
      }
      if (!name) return gcsError(res, 400, "Required parameter: name", "required");
      if (method === "DELETE") {
        if (!store.delete(name)) return gcsError(res, 404, `No such object: ${bucketName}/${name}`, "notFound");
        res.writeHead(204);
        return res.end();
      }
      return simpleUpload(req, res, url, bucketName, name);
    }
    const objectName = m[2] === undefined ? undefined : decodeURIComponent(m[2]);
    const permission = objectName === undefined ? "storage.objects.list" : "storage.objects.get";
    if (!account.buckets.has(bucketName)) {
      return gcsError(
        res,
        403,
        `${account.email} does not have ${permission} access to the Google Cloud Storage ${objectName === undefined ? "bucket" : "object"}. Permission '${permission}' denied on resource (or it may not exist).`,
        "forbidden",
      );
    }
    if (objectName === undefined) return list(url, res, bucketName);
    const object = store.get(objectName);
    if (!object) return gcsError(res, 404, `No such object: ${bucketName}/${objectName}`, "notFound");
    if (url.searchParams.get("alt") !== "media") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(metadata(bucketName, objectName, object)));
    }
    return media(req, res, object.data);
  }

  /** uploadType=media: the body is the object; Content-Length is required (JSON API "Perform a simple upload"). */
  async function simpleUpload(req: IncomingMessage, res: ServerResponse, url: URL, bucketName: string, name: string) {
    if (url.searchParams.get("uploadType") !== "media") {
      return gcsError(res, 400, "Upload requests must include an uploadType URL parameter", "invalid");
    }
    const length = req.headers["content-length"];
    if (length === undefined) return gcsError(res, 411, "Length Required", "required");
    const data = await readBody(req);
    if (data.byteLength !== Number(length)) return gcsError(res, 400, "Content-Length mismatch", "invalid");
    const object = { data: new Uint8Array(data), updated: new Date().toISOString() };
    store.set(name, object);
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify({ ...metadata(bucketName, name, object), contentType: req.headers["content-type"] }));
  }

  function metadata(bucketName: string, name: string, o: { data: Uint8Array; updated: string }) {
    return {
      kind: "storage#object",
      id: `${bucketName}/${name}/1`,
      name,
      bucket: bucketName,
      size: String(o.data.byteLength),
      updated: o.updated,
      contentType: "application/octet-stream",
    };
  }

  function list(url: URL, res: ServerResponse, bucketName: string) {
    const prefix = url.searchParams.get("prefix") ?? "";
    const max = Math.min(Number(url.searchParams.get("maxResults") ?? "1000") || 1000, 1000);
    const after = url.searchParams.get("pageToken");
    const startAfter = after ? Buffer.from(after, "base64url").toString("utf8") : undefined;
    const names = [...store.keys()]
      .filter((n) => n.startsWith(prefix) && (startAfter === undefined || n > startAfter))
      .sort();
    const page = names.slice(0, max);
    const body: Record<string, unknown> = { kind: "storage#objects" };
    if (page.length > 0) body.items = page.map((n) => metadata(bucketName, n, store.get(n)!));
    if (names.length > max) body.nextPageToken = Buffer.from(page[page.length - 1]!, "utf8").toString("base64url");
    res.writeHead(200, { "content-type": "application/json; charset=UTF-8" });
    res.end(JSON.stringify(body));
  }

  function media(req: IncomingMessage, res: ServerResponse, data: Uint8Array) {
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(req.headers.range ?? ""));
    if (!range) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": data.byteLength });
      return res.end(Buffer.from(data));
    }
    const start = Number(range[1]);
    const end = Math.min(range[2] ? Number(range[2]) : data.byteLength - 1, data.byteLength - 1);
    if (start >= data.byteLength) {
      res.writeHead(416, { "content-range": `bytes */${data.byteLength}`, "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { code: 416, message: "The requested range cannot be satisfied." } }));
    }
    res.writeHead(206, {
      "content-type": "application/octet-stream",
      "content-range": `bytes ${start}-${end}/${data.byteLength}`,
      "content-length": end - start + 1,
    });
    res.end(Buffer.from(data.subarray(start, end + 1)));
  }

  async function token(req: IncomingMessage, res: ServerResponse) {
    if (req.method !== "POST") return oauthError(res, 405, "invalid_request", "POST only");
    if (!String(req.headers["content-type"]).startsWith("application/x-www-form-urlencoded")) {
      return oauthError(res, 400, "invalid_request", "Content-Type must be application/x-www-form-urlencoded");
    }
    const form = new URLSearchParams((await readBody(req)).toString("utf8"));
    if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return oauthError(res, 400, "unsupported_grant_type", "Invalid grant_type.");
    }
    const assertion = form.get("assertion") ?? "";
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(assertion);
    } catch {
      return oauthError(res, 400, "invalid_grant", "Invalid JWT: malformed.");
    }
    const issuer = JSON.parse(Buffer.from(assertion.split(".")[1] ?? "", "base64url").toString() || "{}").iss;
    const account = accounts.get(String(issuer));
    if (!account || header.alg !== "RS256" || header.kid !== account.keyId) {
      return oauthError(res, 400, "invalid_grant", "Invalid JWT Signature.");
    }
    let scopes: string[] = [];
    try {
      const { payload } = await jwtVerify(assertion, account.publicKey, {
        algorithms: ["RS256"],
        issuer: account.email,
        audience: tokenUri,
        requiredClaims: ["iat", "exp", "scope"],
      });
      if (payload.exp! - payload.iat! > 3600) throw new Error("exp more than an hour after iat");
      if (payload.sub !== undefined && payload.sub !== account.email) throw new Error("sub is not the account");
      scopes = String(payload.scope).split(" ");
      if (!scopes.some((s) => READ_SCOPES.has(s))) {
        return oauthError(res, 400, "invalid_scope", "No storage scope was requested.");
      }
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return oauthError(res, 400, "invalid_grant", `Invalid JWT: ${reason}`);
    }
    const accessToken = `ya29.${randomBytes(24).toString("base64url")}`;
    tokens.set(accessToken, { email: account.email, expiresAt: Date.now() + 3600 * 1000, scopes });
    tokenCounts.set(account.email, (tokenCounts.get(account.email) ?? 0) + 1);
    res.writeHead(200, { "content-type": "application/json; charset=utf-8" });
    res.end(JSON.stringify({ access_token: accessToken, expires_in: 3599, token_type: "Bearer" }));
  }

  const port = await listen(server);
  cleanups.push(() => closeServer(server));
  const endpoint = `http://${HOST}:${port}`;
  tokenUri = `${endpoint}/token`;

  const reader = await newServiceAccount("reader@dq-test.iam.gserviceaccount.com", tokenUri);
  const stranger = await newServiceAccount("stranger@dq-test.iam.gserviceaccount.com", tokenUri);
  const writer = await newServiceAccount("uploader@dq-test.iam.gserviceaccount.com", tokenUri);
  const impostor = await newServiceAccount(reader.account.client_email, tokenUri);
  for (const [sa, buckets, writable] of [
    [reader, [bucket], []],
    [writer, [bucket], [bucket]],
    [stranger, [], []],
  ] as const) {
    accounts.set(sa.account.client_email, {
      email: sa.account.client_email,
      keyId: sa.account.private_key_id,
      publicKey: sa.publicKey,
      buckets: new Set(buckets),
      writable: new Set(writable),
    });
  }
  return {
    endpoint,
    bucket,
    reader: reader.account,
    writer: writer.account,
    stranger: stranger.account,
    // The reader's identity with a key Google never registered.
    forged: { ...impostor.account, private_key_id: reader.account.private_key_id },
    tokenCountUrl: `${endpoint}/_test/token-count`,
  };
}
