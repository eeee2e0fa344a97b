/** AZURE: files in an Azure Blob Storage container, read with a shared access signature. */

import { z } from "zod";
import { AzureBlobStore } from "../scan/connectors/azure";
import type { CredentialOf } from "./credentials";
import { addressFields, defineConnection, type Loaded, type StoreOptions } from "./module";
import { FILE_ASSET_DOC, filePayload, storageEndpoint, text } from "./schema-parts";
import { filesSource, sparkFields } from "./spark";

export const AzurePayload = z
  .strictObject({
    storage_account: text(255).meta({ description: "The storage account's name" }),
    bucket: text(255).meta({ description: "The blob container the assets' paths are in" }),
    endpoint: storageEndpoint.meta({
      description: "Blob service endpoint; default https://{storage_account}.blob.core.windows.net",
    }),
  })
  .meta({ id: "AzurePayload" });
export type AzurePayload = z.infer<typeof AzurePayload>;

/** An Azure Blob store for a container with a SAS. */
export function azureStore(c: Loaded<AzurePayload, CredentialOf<"AZURE_SAS">>, options: StoreOptions) {
  const { payload } = c;
  return new AzureBlobStore({
    account: payload.storage_account,
    container: payload.bucket,
    sasToken: c.credential.payload.sas_key,
    ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
    ...(options.policy ? { policy: options.policy } : {}),
  });
}

export const azure = defineConnection({
  type: "AZURE",
  payload: AzurePayload,
  credentialType: () => "AZURE_SAS",
  changedAddress: addressFields(["storage_account", "endpoint"]),
  dbType: () => null,
  asset: filePayload(),
  docs: { asset: FILE_ASSET_DOC, dbType: "null (files)" },
  objectStore: azureStore,
  sparkSource: (payload, input) => {
    const fields = z.looseObject({ bucket: z.string(), storage_account: z.string() });
    const { bucket, storage_account } = sparkFields("AZURE", fields, payload);
    return filesSource("AZURE", input, (path) => `abfss://${bucket}@${storage_account}.dfs.core.windows.net/${path}`);
  },
});
