import { describe, expect, inject, it } from "vitest";
import { GcsStore, type GcsStoreOptions } from "../../../src/scan/connectors/gcs";
import { connectorError, drain, expectNoSecrets, objectStoreContract } from "./contract";
import { type GcsTestAccount, LARGE_KEY, PAGE_SIZE, TEXT_OBJECTS } from "./fixtures";

const gcs = inject("objectStores").gcs;
const options = (overrides: Partial<GcsStoreOptions> = {}): GcsStoreOptions => ({
  bucket: gcs.bucket,
  serviceAccount: gcs.reader,
  endpoint: gcs.endpoint,
  ...overrides,
});
/** The private key's body: what must never reach a message. */
const keyBody = (account: GcsTestAccount) => account.private_key.split("\n")[1]!;

async function tokenExchanges(email: string): Promise<number> {
  const res = await fetch(`${gcs.tokenCountUrl}?email=${encodeURIComponent(email)}`);
  return ((await res.json()) as { count: number }).count;
}

// The fake GCS verifies the RS256 assertion (signature, iss, aud, scope, exp) and the bearer token.
objectStoreContract(
  "GCS (JSON API fake)",
  () => new GcsStore(options()),
  () => new GcsStore(options({ pageSize: PAGE_SIZE })),
);

describe("GcsStore", () => {
  it("signs in once and reuses the token across reads and stores", async () => {
    const before = await tokenExchanges(gcs.reader.client_email);
    const first = new GcsStore(options());
    await first.list("data/2024/*.csv");
    await Promise.all([first.readRange(LARGE_KEY, 0, 10), first.readRange(LARGE_KEY, 100, 10)]);
    const second = new GcsStore(options());
    const text = new TextDecoder().decode(await drain(await second.stream("data/2024/summary.csv")));
    expect(text).toBe(TEXT_OBJECTS["data/2024/summary.csv"]);
    const after = await tokenExchanges(gcs.reader.client_email);
    expect(after).toBeGreaterThanOrEqual(1);
    expect(after - before).toBeLessThanOrEqual(1);
  });

  it("answers auth when the account may not read the bucket (403)", async () => {
    const err = await connectorError(new GcsStore(options({ serviceAccount: gcs.stranger })).list("data/*"));
    expect(err.kind).toBe("auth");
    expect(err.message).toContain(`access denied to bucket gs://${gcs.bucket} for the connection's service account`);
    // The e-mail is part of the credential: a viewer of the scan may not read it.
    expectNoSecrets(err, [keyBody(gcs.stranger), gcs.stranger.client_email]);
  });

  it("answers auth when Google refuses the assertion (a key it never saw)", async () => {
    const err = await connectorError(new GcsStore(options({ serviceAccount: gcs.forged })).stream(LARGE_KEY));
    expect(err.kind).toBe("auth");
    expect(err.message).toContain("invalid_grant");
    expectNoSecrets(err, [keyBody(gcs.forged), keyBody(gcs.reader)]);
  });

  it("does not hand a cached token to a different key with the same e-mail and key id", async () => {
    await new GcsStore(options()).list("data/2024/*.csv");
    const err = await connectorError(new GcsStore(options({ serviceAccount: gcs.forged })).list("data/2024/*.csv"));
    expect(err.kind).toBe("auth");
  });

  it("answers auth for a private key that is not PKCS#8", async () => {
    const broken = { ...gcs.reader, private_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" };
    const err = await connectorError(new GcsStore(options({ serviceAccount: broken })).list("data/*"));
    expect(err.kind).toBe("auth");
  });

  it("answers not_found for a missing bucket or object", async () => {
    const bucketErr = await connectorError(new GcsStore(options({ bucket: "no-such-bucket" })).list("data/*"));
    expect(bucketErr.kind).toBe("not_found");
    expect(bucketErr.message).toContain("gs://no-such-bucket");
  });

  it("answers unreachable when the token endpoint or the API cannot be reached", async () => {
    const port = inject("objectStores").closedPort;
    const closed = `http://127.0.0.1:${port}`;
    const tokenErr = await connectorError(
      new GcsStore(options({ serviceAccount: { ...gcs.reader, token_uri: `${closed}/token` } })).list("data/*"),
    );
    expect(tokenErr.kind).toBe("unreachable");
    expect(tokenErr.message).toContain(`127.0.0.1:${port}`);
    const apiErr = await connectorError(new GcsStore(options({ endpoint: closed })).stream(LARGE_KEY));
    expect(apiErr.kind).toBe("unreachable");
    expectNoSecrets(apiErr, [keyBody(gcs.reader), "ya29."]);
  });
});
