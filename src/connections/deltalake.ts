/**
 * DELTALAKE: tables of a Databricks workspace, profiled on its SQL warehouse with a personal access
 * token or a service principal's OAuth client (the same credential starts its Databricks full scans).
 */

import { z } from "zod";
import type { DatabricksAuth } from "../scan/connectors/databricks-auth";
import { type DatabricksBlock, databricksJobs } from "../scan/spark/databricks";
import { tableOf } from "../scan/sql";
import { createDatabricksRunner } from "../scan/sql/databricks";
import type { CredentialOf } from "./credentials";
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

/** How the workspace's calls authenticate: the token, or the service principal's client. */
const authOf = ({ payload }: CredentialOf<"TOKEN">): DatabricksAuth =>
  "token" in payload ? { token: payload.token } : { clientId: payload.client_id, clientSecret: payload.client_secret };

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
      { host: payload.host, port: payload.port, httpPath: payload.httppath, auth: authOf(credential) },
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
          auth: authOf(credential),
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
