/** SQL pushdown: runners, the generator and table profiling. */

import type { OutboundPolicy } from "../../lib/outbound";
import { ConnectorError } from "../connectors/types";
import { type JdbcPayload, jdbcConfig } from "./jdbc-config";
import { createMysqlRunner } from "./mysql";
import { createPostgresRunner } from "./postgres";
import type { SqlRunner, TableRef } from "./runner";

/**
 * A runner for a GENERIC_JDBC connection (see jdbc-config.ts for which payload and credential
 * keys it reads): postgresql → PostgreSQL, mysql and mariadb → MySQL; other databases are unsupported.
 * `policy` decides which hosts may be reached (default: the deployment's, ALLOW_PRIVATE_TARGETS).
 */
export async function createJdbcRunner(
  payload: JdbcPayload,
  credential: Record<string, string>,
  policy?: OutboundPolicy,
): Promise<SqlRunner> {
  switch (payload.db_type) {
    case "postgresql":
      return createPostgresRunner(jdbcConfig(payload, credential, 5432), policy);
    case "mysql":
    case "mariadb":
      return createMysqlRunner(jdbcConfig(payload, credential, 3306), policy);
    case "sqlserver":
    case "oracle":
      // No client for their wire protocols (TDS, Oracle Net) runs in a Worker; Spark's JDBC reader does.
      throw new ConnectorError(
        `GENERIC_JDBC ${payload.db_type} is scanned only by full scans on Spark (its JDBC reader): request a full scan (full_scan: true) with a Spark provider configured`,
        "unsupported",
      );
    default:
      throw new ConnectorError(`GENERIC_JDBC with db_type ${payload.db_type} is not supported yet`, "unsupported");
  }
}

/**
 * The table of a database asset's payload (spec 2.3 and docs/resources/assets.md: DELTALAKE
 * catalog/schema/table, SNOWFLAKE and REDSHIFT database/schema/table, BIGQUERY dataset/table,
 * GENERIC_JDBC schema?/table), or `table` instead of the payload's when a scan names one.
 */
export function tableOf(payload: Record<string, unknown>, table?: string): TableRef {
  const p = payload as { catalog?: string; database?: string; dataset?: string; schema?: string; table: string };
  const catalog = p.catalog ?? p.database;
  const schema = p.schema ?? p.dataset;
  return { ...(catalog ? { catalog } : {}), ...(schema ? { schema } : {}), name: table ?? p.table };
}

export { type ColumnKind, columnKind, type DialectSql, dialectSql } from "./dialects";
export type { FilterValue, ProfileColumn, SqlProfileOptions } from "./generator";
export type { JdbcConfig, JdbcPayload } from "./jdbc-config";
export { loadSchema, MAX_SCHEMA_ATTRIBUTES, profileTable, type SchemaSource } from "./profile-table";
export { DIALECTS, type Dialect, type SqlRunner, type TableRef } from "./runner";
