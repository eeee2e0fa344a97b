import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import {
  changedAddressFields,
  connectionModule,
  createObjectStore,
  createSqlRunner,
  deriveDbType,
  isFileType,
  registerConnectionType,
  requiredCredentialType,
} from "../../src/connections";
import { S3Store } from "../../src/scan/connectors";
import { connectorError } from "../scan/connectors/contract";
import { minio } from "./minio";

const { s3 } = inject("objectStores");
const keys = { type: "AWS" as const, payload: { access_key: s3.accessKeyId, secret_key: s3.secretAccessKey } };

describe("a connection type added by one module (MINIO, registered by this test only)", () => {
  let unregister: () => void;
  beforeAll(() => {
    unregister = registerConnectionType(minio);
  });
  afterAll(() => unregister());

  it("opens its object store through the registry, and the store reads", async () => {
    expect(isFileType("MINIO")).toBe(true);
    const payload = { bucket: s3.bucket, endpoint: s3.endpoint, region: s3.region };
    const store = createObjectStore({ type: "MINIO", payload }, keys);
    expect(store).toBeInstanceOf(S3Store);
    expect((await store.list("data/2024/summary.csv")).map((o) => o.key)).toEqual(["data/2024/summary.csv"]);
  });

  it("derives its credential, database type, address fields and capabilities from its module", async () => {
    expect(requiredCredentialType("MINIO", {})).toBe("AWS");
    expect(deriveDbType("MINIO", {})).toBeNull();
    const at = { bucket: "a", endpoint: "http://minio.example.com:9000" };
    expect(changedAddressFields("MINIO", at, { ...at, endpoint: "http://elsewhere.example.com" })).toEqual([
      "endpoint",
    ]);
    expect(changedAddressFields("MINIO", at, { ...at })).toEqual([]);
    expect(await createSqlRunner({ type: "MINIO", payload: at }, keys)).toBeUndefined();
  });

  it("refuses a payload its module refuses, and a credential of another type", async () => {
    const noEndpoint = await connectorError(
      (async () => createObjectStore({ type: "MINIO", payload: { bucket: s3.bucket } }, keys))(),
    );
    expect([noEndpoint.kind, noEndpoint.message]).toEqual(["invalid", "the MINIO connection's payload is not valid"]);
    const sas = await connectorError(
      (async () =>
        createObjectStore(
          { type: "MINIO", payload: { bucket: s3.bucket, endpoint: s3.endpoint } },
          { type: "AZURE_SAS", payload: { sas_key: "k" } },
        ))(),
    );
    expect([sas.kind, sas.message]).toEqual(["invalid", "a MINIO connection needs a AWS credential, not AZURE_SAS"]);
  });

  it("is registered once, and is gone once unregistered", () => {
    expect(() => registerConnectionType(minio)).toThrow(/already registered/);
    unregister();
    expect(connectionModule("MINIO")).toBeUndefined();
    unregister = registerConnectionType(minio);
  });
});
