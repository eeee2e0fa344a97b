/** DELTALAKE: tables of a Databricks workspace, profiled on its SQL warehouse with a token. */

import { z } from "zod";
import { type DatabricksBlock, databricksJobs } from "../scan/spark/databricks";
import { tableOf } from "../scan/sql";
import { createDatabricksRunner } from "../scan/sql/databricks";
import { addressFields, defineConnection } from "./module";
import { apiEndpoint, identifier, portString, text } from "./schema-parts";

export const DeltaLakePayload = z
  .strictObject({
    host: text().meta({ description: "The workspace host, e.g. adb-1234567890123456.7.azuredatabricks.net" }),
    port: portString.meta({ description: "Its HTTPS port, usually 443" }),
    httppath: text().meta({
      description: "The SQL warehouse's HTTP path, /sql/1.0/warehouses/{id}: statements run on that warehouse",
    }),
    endpoint: apiEndpoint("https://{host}:{port}"),
  })
  .meta({ id: "DeltaLakePayload" });

/** As a row is read: the runner defaults the port (443), so a row without one still opens. */
const StoredDeltaLakePayload = DeltaLakePayload.extend({ port: portString.optional() });
export type DeltaLakePayload = z.infer<typeof StoredDeltaLakePayload>;

export const deltalake = defineConnection({
  type: "DELTALAKE",
  payload: DeltaLakePayload,
  stored: StoredDeltaLakePayload,
  credentialType: () => "TOKEN",
  changedAddress: addressFields(["host", "port", "endpoint"]),
  dbType: () => "databricks",
  asset: z.strictObject({ catalog: identifier, schema: identifier, table: identifier }),
  docs: { asset: "{catalog, schema, table}", dbType: "databricks" },
  group: { payload: z.strictObject({ catalog: identifier, schema: identifier }), doc: "{catalog, schema}" },
  lightScan: true,
  sqlRunner: ({ payload, credential }, options) =>
    createDatabricksRunner(
      { host: payload.host, port: payload.port, httpPath: payload.httppath, token: credential.payload.token },
      { ...options, endpoint: options.endpoint ?? payload.endpoint },
    ),
  sparkTarget: ({ payload, credential }) => ({
    provider: "DATABRICKS",
    client: (block, policy) =>
      databricksJobs(
        {
          host: payload.host,
          ...(payload.port ? { port: payload.port } : {}),
          ...(payload.endpoint ? { endpoint: payload.endpoint } : {}),
          token: credential.payload.token,
          block: block as DatabricksBlock,
        },
        policy,
      ),
  }),
  sparkSource: (_payload, { asset, request }) => {
    const t = tableOf(asset, request.table);
    return { kind: "table", format: "delta", table: [t.catalog, t.schema, t.name].filter(Boolean).join(".") };
  },
});
