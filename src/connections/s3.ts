/** S3: files in an Amazon S3 bucket, or an S3-compatible store's (MinIO, R2…), read with AWS keys. */

import { z } from "zod";
import { S3Store } from "../scan/connectors/s3";
import type { CredentialOf } from "./credentials";
import { addressFields, defineConnection, type Loaded, type StoreOptions } from "./module";
import { FILE_ASSET_DOC, filePayload, storageEndpoint, text } from "./schema-parts";
import { emrStart, filesSource, sparkFields } from "./spark";

export const S3Payload = z
  .strictObject({
    bucket: text(255).meta({ description: "The bucket the assets' paths are in" }),
    region: z
      .string()
      .regex(/^[a-z0-9-]{1,64}$/, "must be a region name such as eu-west-1")
      .optional()
      .meta({ description: "The bucket's region; default us-east-1 (R2: auto)" }),
    endpoint: storageEndpoint.meta({
      description: "An S3-compatible endpoint (MinIO, R2, …), addressed path-style; default Amazon S3",
    }),
  })
  .meta({ id: "S3Payload" });
export type S3Payload = z.infer<typeof S3Payload>;

/** An S3 store for a bucket with AWS keys (also what an S3-compatible type opens). */
export function s3Store(c: Loaded<S3Payload, CredentialOf<"AWS">>, options: StoreOptions): S3Store {
  const { payload, credential } = c;
  return new S3Store({
    bucket: payload.bucket,
    ...(payload.region ? { region: payload.region } : {}),
    ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
    accessKeyId: credential.payload.access_key,
    secretAccessKey: credential.payload.secret_key,
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

export const s3 = defineConnection({
  type: "S3",
  payload: S3Payload,
  credentialType: () => "AWS",
  changedAddress: addressFields(["endpoint", "region"]),
  dbType: () => null,
  asset: filePayload(),
  docs: { asset: FILE_ASSET_DOC, dbType: "null (files)" },
  objectStore: s3Store,
  sparkTarget: (c) => emrStart(c.credential.payload, c.payload.region),
  sparkSource: (payload, input) => {
    const { bucket } = sparkFields("S3", z.looseObject({ bucket: z.string() }), payload);
    return filesSource("S3", input, (path) => `${input.s3Scheme}://${bucket}/${path}`);
  },
});
