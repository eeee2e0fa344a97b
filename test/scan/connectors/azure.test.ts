import { describe, expect, inject, it } from "vitest";
import { AzureBlobStore, type AzureBlobStoreOptions, sasQuery } from "../../../src/scan/connectors/azure";
import { connectorError, drain, expectNoSecrets, objectStoreContract } from "./contract";
import { PAGE_SIZE, TEXT_OBJECTS } from "./fixtures";

const azure = inject("objectStores").azure;
const options = (overrides: Partial<AzureBlobStoreOptions> = {}): AzureBlobStoreOptions => ({
  account: azure.account,
  container: azure.container,
  sasToken: azure.sas,
  endpoint: azure.endpoint,
  ...overrides,
});
const sig = (sas: string) => new URLSearchParams(sas).get("sig")!;
const secretsOf = (sas: string) => [sas, sig(sas), encodeURIComponent(sig(sas))];

objectStoreContract(
  "Azure Blob (Azurite)",
  () => new AzureBlobStore(options()),
  () => new AzureBlobStore(options({ pageSize: PAGE_SIZE })),
);

describe("AzureBlobStore", () => {
  it("accepts the SAS token with a leading ? or as a SAS URL", async () => {
    expect(sasQuery(`?${azure.sas}`)).toBe(azure.sas);
    expect(sasQuery(`https://acct.blob.core.windows.net/c?${azure.sas}`)).toBe(azure.sas);
    const store = new AzureBlobStore(options({ sasToken: `?${azure.sas}` }));
    const text = new TextDecoder().decode(await drain(await store.stream("data/2024/summary.csv")));
    expect(text).toBe(TEXT_OBJECTS["data/2024/summary.csv"]);
  });

  it("answers auth for a SAS signed with another key, without the token in the message", async () => {
    const err = await connectorError(new AzureBlobStore(options({ sasToken: azure.forgedSas })).list("data/*"));
    expect(err.kind).toBe("auth");
    expect(err.message).toContain(`access denied to container '${azure.container}'`);
    expectNoSecrets(err, [...secretsOf(azure.forgedSas), "sig="]);
  });

  it("answers auth for an expired SAS, on reads as on listings", async () => {
    const store = new AzureBlobStore(options({ sasToken: azure.expiredSas }));
    expect((await connectorError(store.list("data/*"))).kind).toBe("auth");
    const err = await connectorError(store.stream("data/2024/summary.csv"));
    expect(err.kind).toBe("auth");
    expectNoSecrets(err, secretsOf(azure.expiredSas));
  });

  it("answers auth when the SAS lacks the list permission, while reads still work", async () => {
    const store = new AzureBlobStore(options({ sasToken: azure.readOnlySas }));
    expect((await connectorError(store.list("data/*"))).kind).toBe("auth");
    expect((await store.readRange("data/2024/summary.csv", 0, 5)).byteLength).toBe(5);
  });

  it("answers not_found for a missing container (ContainerNotFound), naming it", async () => {
    const store = new AzureBlobStore(
      options({ container: azure.missingContainer, sasToken: azure.missingContainerSas }),
    );
    const err = await connectorError(store.list("data/*"));
    expect(err.kind).toBe("not_found");
    expect(err.message).toContain(`container '${azure.missingContainer}'`);
    expect(err.message).toContain("ContainerNotFound");
    expect((await connectorError(store.stream("data/2024/summary.csv"))).kind).toBe("not_found");
  });

  it("answers not_found for a missing blob (BlobNotFound)", async () => {
    const err = await connectorError(new AzureBlobStore(options()).stream("data/none.csv"));
    expect(err.kind).toBe("not_found");
    expect(err.message).toContain("BlobNotFound");
  });

  it("answers unreachable for a closed port, naming the host and no token", async () => {
    const port = inject("objectStores").closedPort;
    const store = new AzureBlobStore(options({ endpoint: `http://127.0.0.1:${port}/${azure.account}` }));
    const err = await connectorError(store.list("data/*"));
    expect(err.kind).toBe("unreachable");
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expectNoSecrets(err, secretsOf(azure.sas));
    expect((await connectorError(store.readRange("data/2024/summary.csv", 0, 4))).kind).toBe("unreachable");
  });
});
