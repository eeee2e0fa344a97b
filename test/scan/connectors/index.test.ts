import { describe, expect, inject, it } from "vitest";
import { createObjectStore } from "../../../src/connections";
import { AzureBlobStore, GcsStore, S3Store } from "../../../src/scan/connectors";
import { connectorError } from "./contract";

const { s3, azure, gcs } = inject("objectStores");
const gcpCredential = {
  type: "GCP" as const,
  payload: { project_id: "dq-test", client_id: "1", ...gcs.reader },
};

describe("createObjectStore", () => {
  it("builds an S3 store from an S3 connection with region and endpoint, and it reads", async () => {
    const store = createObjectStore(
      { type: "S3", payload: { bucket: s3.bucket, region: s3.region, endpoint: s3.endpoint } },
      { type: "AWS", payload: { access_key: s3.accessKeyId, secret_key: s3.secretAccessKey } },
    );
    expect(store).toBeInstanceOf(S3Store);
    expect((await store.list("data/2024/summary.csv")).map((o) => o.key)).toEqual(["data/2024/summary.csv"]);
  });

  it("builds a GCS store that signs in with the service account", async () => {
    const store = createObjectStore(
      { type: "GCS", payload: { bucket: gcs.bucket, endpoint: gcs.endpoint } },
      gcpCredential,
    );
    expect(store).toBeInstanceOf(GcsStore);
    expect((await store.list("data/2024/summary.csv")).length).toBe(1);
  });

  it("builds an Azure store on the payload's container (bucket) with the SAS", async () => {
    const store = createObjectStore(
      { type: "AZURE", payload: { storage_account: azure.account, bucket: azure.container, endpoint: azure.endpoint } },
      { type: "AZURE_SAS", payload: { sas_key: azure.sas } },
    );
    expect(store).toBeInstanceOf(AzureBlobStore);
    expect((await store.list("data/2024/summary.csv")).length).toBe(1);
  });

  it("answers invalid for a HIVE_ICEBERG connection: its files are found through the metastore", async () => {
    const err = await connectorError(
      (async () =>
        createObjectStore(
          {
            type: "HIVE_ICEBERG",
            payload: { thrift_uri: "thrift://h:9083", location_type: "S3", region: "x", bucket: "b" },
          },
          { type: "AWS", payload: { access_key: "a", secret_key: "b" } },
        ))(),
    );
    expect(err.kind).toBe("invalid");
    expect(err.message).toMatch(/metastore/);
  });

  it("answers invalid for a database connection, a mismatched credential or a bad payload", async () => {
    const cases = [
      () =>
        createObjectStore(
          { type: "GENERIC_JDBC", payload: { db_type: "postgresql", db_or_schema: "x" } },
          { type: "GENERIC_MAP", payload: {} },
        ),
      () =>
        createObjectStore({ type: "S3", payload: { bucket: "b" } }, { type: "AZURE_SAS", payload: { sas_key: "k" } }),
      () =>
        createObjectStore({ type: "S3", payload: {} }, { type: "AWS", payload: { access_key: "a", secret_key: "b" } }),
    ];
    for (const make of cases) {
      const err = await connectorError((async () => make())());
      expect(err.kind).toBe("invalid");
    }
  });
});

describe("storage payloads", () => {
  it("accept an optional region and endpoint, refusing endpoints that could carry a secret", async () => {
    const { S3Payload, AzurePayload, GcsPayload } = await import("../../../src/connections");
    expect(S3Payload.safeParse({ bucket: "b", region: "eu-west-1", endpoint: "http://127.0.0.1:9000" }).success).toBe(
      true,
    );
    expect(GcsPayload.safeParse({ bucket: "b", endpoint: "https://storage.example.com" }).success).toBe(true);
    expect(AzurePayload.safeParse({ storage_account: "a", bucket: "c" }).success).toBe(true);
    for (const endpoint of ["ftp://h", "https://user:pw@h", "https://h/?sig=x", "https://h/#f", "not a url"]) {
      expect(S3Payload.safeParse({ bucket: "b", endpoint }).success).toBe(false);
    }
    expect(S3Payload.safeParse({ bucket: "b", region: "EU WEST" }).success).toBe(false);
  });
});
