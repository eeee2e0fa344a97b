import { describe, expect, inject, it } from "vitest";
import { S3Store, type S3StoreOptions } from "../../../src/scan/connectors/s3";
import { connectorError, expectNoSecrets, objectStoreContract } from "./contract";
import { LARGE_KEY, PAGE_SIZE } from "./fixtures";

const s3 = inject("objectStores").s3;
const options = (overrides: Partial<S3StoreOptions> = {}): S3StoreOptions => ({
  bucket: s3.bucket,
  region: s3.region,
  endpoint: s3.endpoint,
  accessKeyId: s3.accessKeyId,
  secretAccessKey: s3.secretAccessKey,
  ...overrides,
});

// s3rver sits behind a front that checks SigV4 as AWS documents it: these pass only if the signing is right.
objectStoreContract(
  "S3 (s3rver)",
  () => new S3Store(options()),
  () => new S3Store(options({ pageSize: PAGE_SIZE })),
);

describe("S3Store failures", () => {
  it("answers auth for a wrong secret key, without the secret in the message", async () => {
    const wrongSecret = "wrong-secret-0123456789abcdefghijklmnop";
    const err = await connectorError(new S3Store(options({ secretAccessKey: wrongSecret })).list("data/*"));
    expect(err.kind).toBe("auth");
    expect(err.message).toContain(`access denied to bucket s3://${s3.bucket}: check the credential`);
    expect(err.message).toContain("SignatureDoesNotMatch");
    expectNoSecrets(err, [wrongSecret, s3.secretAccessKey]);
  });

  it("answers auth for an unknown access key, on reads as on listings", async () => {
    const store = new S3Store(options({ accessKeyId: "AKIAUNKNOWN000000000" }));
    expect((await connectorError(store.stream(LARGE_KEY))).kind).toBe("auth");
    expect((await connectorError(store.readRange(LARGE_KEY, 0, 10))).kind).toBe("auth");
  });

  it("answers auth when signed for another region", async () => {
    const err = await connectorError(new S3Store(options({ region: "us-west-2" })).list("data/*"));
    expect(err.kind).toBe("auth");
  });

  it("answers not_found for a missing bucket", async () => {
    const err = await connectorError(new S3Store(options({ bucket: "no-such-bucket" })).list("data/*"));
    expect(err.kind).toBe("not_found");
    expect(err.message).toContain("s3://no-such-bucket");
  });

  it("answers unreachable for a closed port, naming the host and no secret", async () => {
    const endpoint = `http://127.0.0.1:${inject("objectStores").closedPort}`;
    const store = new S3Store(options({ endpoint }));
    const err = await connectorError(store.list("data/*"));
    expect(err.kind).toBe("unreachable");
    expect(err.transient).toBe(true);
    expect(err.message).toContain(`127.0.0.1:${inject("objectStores").closedPort}`);
    expectNoSecrets(err, [s3.secretAccessKey, "X-Amz", "Signature="]);
    expect((await connectorError(store.stream(LARGE_KEY))).kind).toBe("unreachable");
  });
});
