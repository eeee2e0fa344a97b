/**
 * HIVE_ICEBERG: Iceberg tables found through a Hive metastore, their files read from the bucket of
 * the catalog's location type (S3, GCS, AZURE) with that store's credential.
 */

import { z } from "zod";
import type { OutboundPolicy } from "../lib/outbound";
import { ConnectorError, type ObjectStore } from "../scan/connectors/types";
import { openIcebergTable } from "../scan/iceberg";
import { tableOf } from "../scan/sql";
import { AzurePayload, azureStore } from "./azure";
import type { CredentialOf } from "./credentials";
import { GcsPayload, gcsStore } from "./gcs";
import { defineConnection, isCredential, type Loaded, type StoredPayload, sameValue } from "./module";
import { S3Payload, s3Store } from "./s3";
import { identifier, storageEndpoint, text } from "./schema-parts";
import { dataprocStart, emrStart, sparkFields } from "./spark";

/** thrift://<host>:<port>, the form of a Hive metastore URI (usually port 9083). */
const THRIFT_URI = /^thrift:\/\/([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\]):(\d{1,5})$/;
const thriftUri = z
  .string()
  .max(1024)
  .refine((uri) => {
    const m = THRIFT_URI.exec(uri);
    return m !== null && Number(m[2]) >= 1 && Number(m[2]) <= 65535;
  }, "must be thrift://<host>:<port>")
  .meta({ example: "thrift://metastore.example.com:9083" });

/** Where a HIVE_ICEBERG catalog keeps its files; it decides the credential type. */
export const ICEBERG_LOCATION_TYPES = ["GCS", "S3", "AZURE"] as const;

export const HiveIcebergPayload = z
  .strictObject({
    thrift_uri: thriftUri.meta({ description: "The Hive metastore, thrift://<host>:<port> (usually 9083)" }),
    location_type: z.enum(ICEBERG_LOCATION_TYPES).meta({
      description: "Where the tables' files are; decides the credential (GCS → GCP, S3 → AWS, AZURE → AZURE_SAS)",
    }),
    region: text(255).meta({ description: "The bucket's region (S3)" }),
    bucket: text(255).meta({
      description: "The bucket (Azure: container) holding the tables' files; the credential is used for it only",
    }),
    endpoint: storageEndpoint.meta({
      description:
        "The store's endpoint when not the provider's own (an S3-compatible store, an emulator); the Azure account comes from the table's abfss:// location",
    }),
  })
  .meta({ id: "HiveIcebergPayload" });
export type HiveIcebergPayload = z.infer<typeof HiveIcebergPayload>;

type IcebergCredential = CredentialOf<"GCP"> | CredentialOf<"AWS"> | CredentialOf<"AZURE_SAS">;

const CREDENTIAL_FOR_LOCATION = {
  GCS: "GCP",
  S3: "AWS",
  AZURE: "AZURE_SAS",
} as const satisfies Record<HiveIcebergPayload["location_type"], IcebergCredential["type"]>;

/** The payload, checked again as the store type's own: a row written before a schema change must not crash a scan. */
function storePayload<T>(schema: z.ZodType<T>, type: string, payload: unknown): T {
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw new ConnectorError(`the ${type} connection's payload is not valid`, "invalid");
  return parsed.data;
}

/** The store of the catalog's bucket (on Azure, in the storage account a table's location names). */
function storeOf(c: Loaded<HiveIcebergPayload, IcebergCredential>, policy: OutboundPolicy, account?: string) {
  const { payload, credential } = c;
  const endpoint = payload.endpoint ? { endpoint: payload.endpoint } : {};
  const options = { policy };
  const mismatch = () =>
    new ConnectorError(
      `a ${payload.location_type} connection needs a ${CREDENTIAL_FOR_LOCATION[payload.location_type]} credential, not ${credential.type}`,
      "invalid",
    );
  switch (payload.location_type) {
    case "S3": {
      if (!isCredential(credential, "AWS")) throw mismatch();
      const s3 = { bucket: payload.bucket, region: payload.region, ...endpoint };
      return s3Store({ type: "S3", payload: storePayload(S3Payload, "S3", s3), credential }, options);
    }
    case "GCS": {
      if (!isCredential(credential, "GCP")) throw mismatch();
      const gcs = { bucket: payload.bucket, ...endpoint };
      return gcsStore({ type: "GCS", payload: storePayload(GcsPayload, "GCS", gcs), credential }, options);
    }
    case "AZURE": {
      if (!isCredential(credential, "AZURE_SAS")) throw mismatch();
      const azure = { bucket: payload.bucket, storage_account: account, ...endpoint };
      return azureStore({ type: "AZURE", payload: storePayload(AzurePayload, "AZURE", azure), credential }, options);
    }
  }
}

export const hiveIceberg = defineConnection({
  type: "HIVE_ICEBERG",
  payload: HiveIcebergPayload,
  credentialType: (payload): IcebergCredential["type"] => CREDENTIAL_FOR_LOCATION[payload.location_type],
  credentialBasis: (payload) => payload.location_type,
  // Metastore, store type, region and bucket all steer where the catalog's credential is used.
  changedAddress: (before: StoredPayload, after: StoredPayload) =>
    [...new Set([...Object.keys(before), ...Object.keys(after)])]
      .sort()
      .filter((key) => !sameValue(before[key], after[key])),
  dbType: () => "iceberg",
  asset: z.strictObject({ database: identifier, table: identifier }),
  docs: { asset: "{database, table}", dbType: "iceberg" },
  noObjectStore:
    "a HIVE_ICEBERG connection's files are found through its metastore: scan its tables as HIVE_ICEBERG assets",
  metastore: (c, policy, asset) =>
    openIcebergTable(c.payload, (account) => storeOf(c, policy, account) as ObjectStore, policy, asset),
  sparkTarget: ({ payload, credential }) => {
    if (isCredential(credential, "AWS")) return emrStart(credential.payload, payload.region);
    if (isCredential(credential, "GCP")) return dataprocStart(credential.payload);
    return undefined;
  },
  sparkSource: (payload, { asset, request }) => {
    const { thrift_uri } = sparkFields("HIVE_ICEBERG", z.looseObject({ thrift_uri: z.string() }), payload);
    const { database } = sparkFields("HIVE_ICEBERG", z.looseObject({ database: z.string().optional() }), asset);
    // The asset's Hive database is the Iceberg namespace under the driver's catalog "dq"
    // (tableOf reads a payload's `database` as a warehouse's catalog).
    const table = [database, tableOf(asset, request.table).name].filter(Boolean).join(".");
    return { kind: "iceberg", metastore_uri: thrift_uri, table };
  },
});
