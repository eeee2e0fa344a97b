/**
 * A test-only connection type, to show what adding one takes (this file and its test): MINIO, a
 * bucket on a self-hosted S3-compatible store. Its endpoint is required (there is no provider
 * default), it authenticates with AWS-style keys, and it opens the S3 connector path-style.
 */
import { z } from "zod";
import { defineConnection, identifier, S3Payload, s3Store, storageEndpoint } from "../../src/connections";

const MinioPayload = z.strictObject({
  bucket: identifier,
  endpoint: storageEndpoint.unwrap(),
  /** The server's MINIO_REGION; MinIO's default is us-east-1. */
  region: z.string().default("us-east-1"),
});

export const minio = defineConnection({
  type: "MINIO",
  payload: MinioPayload,
  credentialType: () => "AWS",
  // Both name where the keys are sent: another server, or another tenant's bucket on the same one.
  changedAddress: (before, after) => ["bucket", "endpoint", "region"].filter((k) => before[k] !== after[k]),
  dbType: () => null,
  asset: z.strictObject({ path: z.string().min(1), format: z.enum(["csv", "parquet"]) }),
  docs: { asset: "{path, format: csv | parquet}", dbType: "null (files)" },
  objectStore: ({ payload, credential }, options) =>
    s3Store({ type: "S3", payload: S3Payload.parse(payload), credential }, options),
});
