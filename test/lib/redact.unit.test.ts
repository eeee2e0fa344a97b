import { afterEach, describe, expect, it, vi } from "vitest";
import { basicAuthSecrets, EXCERPT_MAX, excerpt, logUpstreamFailure, redactSecrets } from "../../src/lib/redact";

const b64 = (s: string) => btoa(s);

describe("redactSecrets", () => {
  it("removes the request's own secrets in every form they travel in", () => {
    const user = "dq_reader";
    const password = "Pa55word!with/slash";
    const text = [
      `password authentication failed for user "${user}"`,
      `echo: Authorization: Basic ${b64(`${user}:${password}`)}`,
      `url-encoded ${encodeURIComponent(password)}`,
      `json ${JSON.stringify({ p: password })}`,
      `raw ${password}`,
    ].join("\n");
    const out = redactSecrets(text, basicAuthSecrets(user, password));
    expect(out).not.toContain(user);
    expect(out).not.toContain(password);
    expect(out).not.toContain(encodeURIComponent(password));
    expect(out).not.toContain(b64(`${user}:${password}`));
    expect(out).toContain("password authentication failed for user");
  });

  it("replaces short secrets (a user name like 'sa') only as whole words", () => {
    expect(redactSecrets("Login failed for user 'sa'. Reason: sample mismatch", ["sa"])).toBe(
      "Login failed for user '[redacted]'. Reason: sample mismatch",
    );
  });

  it.each([
    ["Bearer", "Authorization: Bearer abc.def-123_XYZ"],
    ["Basic", "authorization=Basic dXNlcjpwYXNzd29yZA=="],
    ["password=", "jdbc:postgresql://h/db?user=u&password=hunter22"],
    ["JSON password", '{"user":"u","password":"correct horse battery"}'],
    ["sig=", "https://acct.blob.core.windows.net/c/b?sv=2024-01-01&sig=AbC%2Bd3F%3D"],
    ["AWS key id", "The AWS Access Key Id AKIAIOSFODNN7EXAMPLE does not exist"],
    [
      "AWS signature",
      "Credential=AKIAIOSFODNN7EXAMPLE/20240101/us-east-1/s3/aws4_request, Signature=fe5f80f77d5fa3beca038a248ff027d0445342fe2855ddc963176630326f1024",
    ],
    ["JWT", "token eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLWJ5dGVz rejected"],
    ["PEM", "key -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\n-----END PRIVATE KEY----- is bad"],
    ["Databricks token", "invalid token dapi0123456789abcdef0123456789abcdef"],
    ["URL user info", "cannot reach https://admin:hunter22@db.example.com/"],
    ["opaque key", "key 9fJ2kLmN0pQrS5tUvWx8yZaB3cDeFgHiJkLmNoPqRsTu was refused"],
  ])("removes credentials that look like one without being told: %s", (_, text) => {
    const out = redactSecrets(text);
    expect(out).toContain("[redacted]");
    for (const secret of [
      "abc.def-123_XYZ",
      "dXNlcjpwYXNzd29yZA",
      "hunter22",
      "correct horse",
      "AbC%2Bd3F",
      "AKIAIOSFODNN7EXAMPLE",
      "fe5f80f77d5f",
      "eyJhbGciOiJSUzI1NiJ9",
      "MIIEvQIBADANBgkq",
      "dapi0123456789",
      "9fJ2kLmN0pQr",
    ]) {
      expect(out).not.toContain(secret);
    }
  });

  it("leaves ordinary messages, UUIDs and hashes alone, and is idempotent", () => {
    const text =
      "Table 'sales.orders' doesn't exist; query 0f8c2a3e-5b7d-4c1e-9a2b-3c4d5e6f7a8b, etag 9b2cf535f27731c974343645a3985328";
    expect(redactSecrets(text)).toBe(text);
    const once = redactSecrets('token: "abc12345", Basic dXNlcjpwYXNz', ["abc12345"]);
    expect(redactSecrets(once)).toBe(once);
  });
});

describe("excerpt", () => {
  it("collapses whitespace and cuts to 300 characters with an ellipsis", () => {
    const long = `first line\n\n\t${"word ".repeat(200)}`;
    const out = excerpt(long);
    expect(out.length).toBeLessThanOrEqual(EXCERPT_MAX);
    expect(out.endsWith("…")).toBe(true);
    expect(out.startsWith("first line word")).toBe(true);
    expect(excerpt("short\n text")).toBe("short text");
    expect(excerpt(undefined)).toBe("");
  });

  it("redacts before cutting, so no secret is left half-visible at the edge", () => {
    const secret = "zz-s3cr3t-value-zz";
    const text = `${"x".repeat(290)} ${secret}`;
    const out = excerpt(text, [secret]);
    expect(out).not.toContain("zz-s3cr");
  });
});

describe("logUpstreamFailure", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("logs the whole answer as one JSON line, redacted the same way, with the request id", () => {
    const lines: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => {
      lines.push(String(line));
    });
    const body = `Bad request ${"detail ".repeat(100)} Authorization: Basic ${b64("bot@example.com:tok-123")}`;
    logUpstreamFailure({ source: "jira", status: 400, request_id: "req-1" }, body, [
      ...basicAuthSecrets("bot@example.com", "tok-123"),
    ]);
    expect(lines).toHaveLength(1);
    const entry = JSON.parse(lines[0]!);
    expect(entry).toMatchObject({ event: "upstream_failure", source: "jira", status: 400, request_id: "req-1" });
    expect(entry.detail.length).toBeGreaterThan(EXCERPT_MAX);
    expect(lines[0]).not.toContain("tok-123");
    expect(lines[0]).not.toContain(b64("bot@example.com:tok-123"));
  });
});
