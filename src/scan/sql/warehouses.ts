/**
 * SQL pushdown to cloud warehouses over their HTTP SQL APIs: Snowflake (SQL API v2), BigQuery
 * (jobs.query), Databricks (SQL Statement Execution API 2.0) and Amazon Redshift (Data API).
 * Each runner submits one statement, polls it (bounded, with a pause between polls) until it
 * finishes, pages through its result, and turns provider rows into objects keyed by column name.
 * This module picks the runner of a connection; what they share is in warehouse-api.ts.
 */

import { ConnectorError } from "../connectors/types";
import { createBigQueryRunner } from "./bigquery";
import { createDatabricksRunner } from "./databricks";
import { createRedshiftRunner } from "./redshift";
import type { SqlRunner } from "./runner";
import { createSnowflakeRunner } from "./snowflake";
import type { WarehouseRunnerOptions } from "./warehouse-api";

export type { WarehouseRunnerOptions } from "./warehouse-api";

/** The connection and credential as stored (payloads already validated by the connection schemas). */
export interface WarehouseConnection {
  type: string;
  payload: Record<string, unknown>;
}

const REQUIRED_CREDENTIAL: Record<string, string> = {
  SNOWFLAKE: "SIMPLE",
  BIGQUERY: "GCP",
  DELTALAKE: "TOKEN",
  REDSHIFT: "SIMPLE",
};

/** Connection types a warehouse runner serves. */
export const WAREHOUSE_TYPES = Object.keys(REQUIRED_CREDENTIAL);

/**
 * The SQL runner of a SNOWFLAKE, BIGQUERY, DELTALAKE or REDSHIFT connection. Nothing is sent
 * until the first query; a credential that cannot be used at all fails here.
 */
export async function createWarehouseRunner(
  connection: WarehouseConnection,
  credential: WarehouseConnection,
  options: WarehouseRunnerOptions = {},
): Promise<SqlRunner> {
  const need = REQUIRED_CREDENTIAL[connection.type];
  if (!need) throw new ConnectorError(`${connection.type} is not a warehouse connection`, "unsupported");
  if (credential.type !== need) {
    throw new ConnectorError(`a ${connection.type} connection needs a ${need} credential`, "invalid");
  }
  const payload = connection.payload;
  const secret = credential.payload;
  const opts = { ...options, endpoint: options.endpoint ?? optionalText(payload, "endpoint") };
  switch (connection.type) {
    case "SNOWFLAKE":
      return createSnowflakeRunner(
        {
          account: text(payload, "account"),
          warehouse: text(payload, "warehouse"),
          role: text(payload, "role"),
          database: optionalText(payload, "database"),
          schema: optionalText(payload, "schema"),
          username: text(secret, "username"),
          password: text(secret, "password"),
          privateKey: optionalText(secret, "private_key"),
        },
        opts,
      );
    case "BIGQUERY":
      return createBigQueryRunner(
        {
          project: text(payload, "project"),
          location: optionalText(payload, "location"),
          serviceAccount: {
            client_email: text(secret, "client_email"),
            private_key: text(secret, "private_key"),
            private_key_id: text(secret, "private_key_id"),
            ...(optionalText(secret, "token_uri") ? { token_uri: text(secret, "token_uri") } : {}),
          },
        },
        opts,
      );
    case "DELTALAKE":
      return createDatabricksRunner(
        {
          host: text(payload, "host"),
          port: optionalText(payload, "port"),
          httpPath: text(payload, "httppath"),
          token: text(secret, "token"),
        },
        opts,
      );
    default:
      return createRedshiftRunner(
        {
          endpointPrefix: text(payload, "endpoint_prefix"),
          database: optionalText(payload, "database"),
          username: text(secret, "username"),
          accessKeyId: optionalText(secret, "access_key"),
          secretAccessKey: optionalText(secret, "secret_key"),
          sessionToken: optionalText(secret, "session_token"),
          region: optionalText(secret, "region"),
        },
        opts,
      );
  }
}

function text(payload: Record<string, unknown>, key: string): string {
  const v = payload[key];
  if (typeof v !== "string" || v === "") throw new ConnectorError(`the connection has no ${key}`, "invalid");
  return v;
}

function optionalText(payload: Record<string, unknown>, key: string): string | undefined {
  const v = payload[key];
  return typeof v === "string" && v !== "" ? v : undefined;
}

// ---- Shared by the runners ----
