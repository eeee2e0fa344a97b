import { env } from "cloudflare:workers";
import { importJWK, SignJWT } from "jose";
import { afterEach, describe, expect, inject, it, vi } from "vitest";
import { verifyBearer } from "../../src/auth/tokens";
import type { Env } from "../../src/env";
import { UnauthenticatedError } from "../../src/lib/errors";
import {
  checkOutboundHost,
  checkOutboundUrl,
  type OutboundPolicy,
  OutboundTargetError,
  outboundPolicy,
  privateHostReason,
} from "../../src/lib/outbound";
import { deploymentOutboundPolicy, outboundFetch } from "../../src/lib/outbound-fetch";
import { asDeployed } from "../support/outbound";
import { unique } from "../support/unique";

const DEPLOYED: OutboundPolicy = { allowPrivateTargets: false };
const LOCAL: OutboundPolicy = { allowPrivateTargets: true };

/** The error a call throws (or undefined when it does not). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (err) {
    return err;
  }
  return undefined;
}

describe("outboundPolicy", () => {
  it("allows private targets only when ALLOW_PRIVATE_TARGETS is exactly 'true'", () => {
    expect(outboundPolicy({ ALLOW_PRIVATE_TARGETS: "true" })).toEqual(LOCAL);
    for (const v of [undefined, "", "false", "TRUE", "1", "yes"]) {
      expect(outboundPolicy({ ALLOW_PRIVATE_TARGETS: v })).toEqual(DEPLOYED);
    }
  });

  it("reads the deployment's env when no policy is handed over", async () => {
    expect(deploymentOutboundPolicy()).toEqual(LOCAL);
    expect(await asDeployed(async () => deploymentOutboundPolicy())).toEqual(DEPLOYED);
    expect(deploymentOutboundPolicy()).toEqual(LOCAL);
  });
});

describe("checkOutboundUrl with private targets refused (deployed)", () => {
  const refused = [
    // loopback, in the forms the URL parser canonicalises
    "https://127.0.0.1/",
    "https://127.1.2.3:8443/x",
    "https://2130706433/",
    "https://0x7f.1/",
    "https://0177.0.0.1/",
    "https://localhost/",
    "https://LOCALHOST./",
    "https://api.localhost/",
    "https://[::1]/",
    // this network, private, CGNAT
    "https://0.0.0.0/",
    "https://10.1.2.3/",
    "https://172.16.0.1/",
    "https://172.31.255.255/",
    "https://192.168.1.10/",
    "https://100.64.0.1/",
    "https://100.100.100.200/",
    // link-local and cloud metadata
    "https://169.254.169.254/latest/meta-data/",
    "https://169.254.0.1/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://metadata/",
    "https://instance-data.ec2.internal/",
    "https://192.0.0.192/",
    "https://[fe80::1]/",
    "https://[fd00:ec2::254]/",
    "https://[fc00::1]/",
    // IPv4-mapped, -compatible, NAT64 and 6to4 forms of private addresses
    "https://[::ffff:127.0.0.1]/",
    "https://[::ffff:7f00:1]/",
    "https://[::ffff:169.254.169.254]/",
    "https://[::ffff:10.0.0.1]/",
    "https://[::127.0.0.1]/",
    "https://[64:ff9b::a9fe:a9fe]/",
    "https://[2002:a9fe:a9fe::1]/",
    "https://[::]/",
    // private names, single labels, multicast
    "https://db.internal/",
    "https://printer.local/",
    "https://router.home.arpa/",
    "https://db/",
    "https://224.0.0.1/",
  ];

  it.each(refused)("refuses %s", (url) => {
    const err = thrown(() => checkOutboundUrl(url, DEPLOYED));
    expect(err).toBeInstanceOf(OutboundTargetError);
    expect((err as Error).message).toMatch(/refused: it is .*ALLOW_PRIVATE_TARGETS/);
    // The same URL is fine for local development and tests.
    expect(checkOutboundUrl(url, LOCAL).href).toBe(new URL(url).href);
  });

  it.each([
    "https://acme.atlassian.net/rest/api/3/issue",
    "https://s3.eu-west-1.amazonaws.com/bucket/key",
    "https://storage.googleapis.com/storage/v1/b/x/o",
    "https://8.8.8.8/",
    "https://[2606:4700:4700::1111]/",
    "https://[::ffff:8.8.8.8]/",
    "https://172.32.0.1/",
    "https://100.128.0.1/",
  ])("allows the public %s", (url) => {
    expect(checkOutboundUrl(url, DEPLOYED).href).toBe(new URL(url).href);
  });

  it("sends credentials over https only, and speaks no other scheme", () => {
    expect(thrown(() => checkOutboundUrl("http://acme.atlassian.net/", DEPLOYED))).toMatchObject({
      name: "OutboundTargetError",
      message: expect.stringMatching(/only sent over https/),
    });
    expect(checkOutboundUrl("http://example.com/jwks", DEPLOYED, { credentials: false }).host).toBe("example.com");
    expect(checkOutboundUrl("http://127.0.0.1:9/", LOCAL).port).toBe("9");
    for (const url of ["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/"]) {
      expect(thrown(() => checkOutboundUrl(url, LOCAL))).toBeInstanceOf(OutboundTargetError);
    }
    expect(thrown(() => checkOutboundUrl("not a url", LOCAL))).toBeInstanceOf(OutboundTargetError);
  });
});

describe("checkOutboundHost (TCP: JDBC hosts)", () => {
  it("refuses loopback, private, metadata and mapped addresses in any spelling", () => {
    for (const host of [
      "127.0.0.1",
      "localhost",
      "2130706433",
      "0x7f000001",
      "::1",
      "[::1]",
      "::ffff:127.0.0.1",
      "::ffff:a9fe:a9fe",
      "10.0.0.5",
      "169.254.169.254",
      "metadata.google.internal",
      "db.local",
    ]) {
      expect(
        thrown(() => checkOutboundHost(host, DEPLOYED)),
        host,
      ).toBeInstanceOf(OutboundTargetError);
      expect(() => checkOutboundHost(host, LOCAL)).not.toThrow();
    }
  });

  it("returns the canonical host of a public one, and refuses what is not a host", () => {
    expect(checkOutboundHost("DB.Example.COM", DEPLOYED)).toBe("db.example.com");
    expect(checkOutboundHost("2001:db8::1", DEPLOYED)).toBe("[2001:db8::1]");
    for (const host of ["", "a b", "evil.com/x", "user@evil.com", "evil.com#"]) {
      expect(
        thrown(() => checkOutboundHost(host, LOCAL)),
        host,
      ).toBeInstanceOf(OutboundTargetError);
    }
  });

  it("refuses a password over plain TCP when deployed", () => {
    expect(thrown(() => checkOutboundHost("db.example.com", DEPLOYED, { plaintext: true }))).toMatchObject({
      message: expect.stringMatching(/without TLS/),
    });
    expect(checkOutboundHost("127.0.0.1", LOCAL, { plaintext: true })).toBe("127.0.0.1");
  });
});

describe("privateHostReason", () => {
  it("names the kind of address, for a message the user can act on", () => {
    expect(privateHostReason("169.254.169.254")).toMatch(/link-local.*metadata/);
    expect(privateHostReason("::ffff:7f00:1")).toMatch(/IPv4-mapped.*loopback/);
    expect(privateHostReason("[fd12::1]")).toMatch(/unique local/);
    expect(privateHostReason("example.com")).toBeUndefined();
  });
});

describe("outboundFetch", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  /** Stubs the runtime's fetch with answers by URL; returns the requests it was sent. */
  function stubFetch(answers: Record<string, () => Response>) {
    const sent: { url: string; method: string; headers: Record<string, string>; redirect: string | undefined }[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const url = String(input instanceof Request ? input.url : input);
      sent.push({
        url,
        method: init?.method ?? "GET",
        headers: Object.fromEntries(new Headers(init?.headers).entries()),
        redirect: init?.redirect,
      });
      const answer = answers[url];
      return answer ? answer() : new Response("ok");
    });
    return sent;
  }

  const redirect =
    (to: string, status = 302) =>
    () =>
      new Response(null, { status, headers: { location: to } });

  it("refuses a private target before sending anything", async () => {
    const sent = stubFetch({});
    const err = await outboundFetch("https://169.254.169.254/latest/meta-data/", {}, { policy: DEPLOYED }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OutboundTargetError);
    expect(sent).toEqual([]);
  });

  it("follows redirects itself and checks each target: a public endpoint cannot bounce to the metadata service", async () => {
    const sent = stubFetch({
      "https://files.example.com/a": redirect("http://169.254.169.254/latest/meta-data/iam/"),
      "https://files.example.com/b": redirect("https://[::ffff:127.0.0.1]:8080/admin"),
    });
    for (const path of ["a", "b"]) {
      const err = await outboundFetch(`https://files.example.com/${path}`, {}, { policy: DEPLOYED }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(OutboundTargetError);
    }
    expect(sent.map((r) => r.url)).toEqual(["https://files.example.com/a", "https://files.example.com/b"]);
    expect(sent.every((r) => r.redirect === "manual")).toBe(true);
  });

  it("drops Authorization and every other credential header when a redirect changes hosts, keeps them on the same host", async () => {
    const sent = stubFetch({
      "https://api.example.com/start": redirect("/next"),
      "https://api.example.com/next": redirect("https://cdn.example.net/file", 307),
    });
    const res = await outboundFetch(
      "https://api.example.com/start",
      {
        headers: {
          authorization: "Bearer s3cr3t-token",
          "x-amz-security-token": "session-s3cr3t",
          "x-amz-date": "20240101T000000Z",
          cookie: "sid=s3cr3t",
          accept: "application/json",
          range: "bytes=0-9",
        },
      },
      { policy: DEPLOYED },
    );
    expect(await res.text()).toBe("ok");
    expect(sent.map((r) => r.url)).toEqual([
      "https://api.example.com/start",
      "https://api.example.com/next",
      "https://cdn.example.net/file",
    ]);
    expect(sent[1]!.headers.authorization).toBe("Bearer s3cr3t-token");
    expect(sent[2]!.headers).toEqual({ accept: "application/json", range: "bytes=0-9" });
    expect(JSON.stringify(sent[2])).not.toContain("s3cr3t");
  });

  it("never carries a request body to another host, and stops after 5 redirects", async () => {
    stubFetch({
      "https://oauth.example.com/token": redirect("https://evil.example.net/token", 307),
      "https://loop.example.com/": redirect("https://loop.example.com/"),
    });
    const body = await outboundFetch(
      "https://oauth.example.com/token",
      { method: "POST", body: "assertion=eyJhbGciOi.s3cr3t.sig" },
      { policy: DEPLOYED },
    ).catch((e: unknown) => e);
    expect(body).toMatchObject({ name: "OutboundTargetError", message: expect.stringMatching(/with a body/) });
    const loop = await outboundFetch("https://loop.example.com/", {}, { policy: DEPLOYED }).catch((e: unknown) => e);
    expect(loop).toMatchObject({ name: "OutboundTargetError", message: expect.stringMatching(/more than 5/) });
  });

  it("against a real server: a redirect to another origin arrives without the Authorization header", async () => {
    const trap = inject("httpTrap");
    const box = unique("redir");
    const landing = `${trap.otherUrl}/${box}/landing`;
    const res = await outboundFetch(`${trap.url}/${box}/redirect?to=${encodeURIComponent(landing)}`, {
      headers: { authorization: "Basic dXNlcjpzM2NyM3Q=", "x-api-key": "k3y-s3cr3t", accept: "application/json" },
    });
    expect(res.status).toBe(401);
    const received = (await (await fetch(`${trap.url}/__received/${box}`)).json()) as {
      path: string;
      headers: Record<string, string>;
    }[];
    expect(received.map((r) => r.path)).toEqual([
      `/${box}/redirect?to=${encodeURIComponent(landing)}`,
      `/${box}/landing`,
    ]);
    expect(received[0]!.headers.authorization).toBe("Basic dXNlcjpzM2NyM3Q=");
    expect(received[1]!.headers.authorization).toBeUndefined();
    expect(received[1]!.headers["x-api-key"]).toBeUndefined();
    expect(received[1]!.headers.accept).toBe("application/json");
  });
});

describe("the OIDC key set is fetched through the guard", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("deployed, a JWKS URL on loopback is refused (the token is not trusted); locally it is used", async () => {
    const oidc = inject("oidc");
    const issuer = "https://idp.example.test";
    const oidcEnv = (allow: string | undefined): Env => ({
      ...(env as unknown as Env),
      OIDC_ISSUER: issuer,
      OIDC_AUDIENCE: "dq-monitor",
      OIDC_JWKS_URL: oidc.jwksUrl,
      OIDC_ALGORITHMS: "RS256",
      ALLOW_PRIVATE_TARGETS: allow,
    });
    const key = (await importJWK(oidc.privateJwk as never, "RS256")) as CryptoKey;
    const token = await new SignJWT({ email: "ada@example.com" })
      .setProtectedHeader({ alg: "RS256", kid: oidc.kid })
      .setIssuer(issuer)
      .setAudience("dq-monitor")
      .setIssuedAt()
      .setExpirationTime("5m")
      .sign(key);
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
    await expect(verifyBearer(oidcEnv(undefined), token)).rejects.toBeInstanceOf(UnauthenticatedError);
    expect(logged.join("\n")).toMatch(/oidc_jwks.*is refused: it is a loopback address/);
    expect((await verifyBearer(oidcEnv("true"), token)).principal).toEqual({ kind: "user", email: "ada@example.com" });
  });
});
