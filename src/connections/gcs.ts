/** GCS: files in a Google Cloud Storage bucket, read with a service account. */

import { z } from "zod";
import { GcsStore } from "../scan/connectors/gcs";
import type { CredentialOf } from "./credentials";
import { addressFields, defineConnection, type Loaded, type StoreOptions } from "./module";
import { FILE_ASSET_DOC, filePayload, storageEndpoint, text } from "./schema-parts";
import { dataprocStart, filesSource, sparkFields } from "./spark";

export const GcsPayload = z
  .strictObject({
    bucket: text(255).meta({ description: "The bucket the assets' paths are in" }),
    endpoint: storageEndpoint.meta({ description: "JSON API endpoint; default https://storage.googleapis.com" }),
  })
  .meta({ id: "GcsPayload" });
export type GcsPayload = z.infer<typeof GcsPayload>;

/** A GCS store for a bucket with a service account; `writable` asks for a read_write token. */
export function gcsStore(c: Loaded<GcsPayload, CredentialOf<"GCP">>, options: StoreOptions): GcsStore {
  const { payload } = c;
  const secret = c.credential.payload;
  return new GcsStore({
    bucket: payload.bucket,
    serviceAccount: {
      client_email: secret.client_email,
      private_key: secret.private_key,
      private_key_id: secret.private_key_id,
      ...(secret.token_uri ? { token_uri: secret.token_uri } : {}),
    },
    ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
    ...(options.writable ? { writable: true } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

export const gcs = defineConnection({
  type: "GCS",
  payload: GcsPayload,
  credentialType: () => "GCP",
  changedAddress: addressFields(["endpoint"]),
  dbType: () => null,
  asset: filePayload(),
  docs: { asset: FILE_ASSET_DOC, dbType: "null (files)" },
  objectStore: gcsStore,
  sparkTarget: (c) => dataprocStart(c.credential.payload),
  sparkSource: (payload, input) => {
    const { bucket } = sparkFields("GCS", z.looseObject({ bucket: z.string() }), payload);
    return filesSource("GCS", input, (path) => `gs://${bucket}/${path}`);
  },
});
