/** SQL pushdown: runners, the generator and table profiling. */

import { ConnectorError } from "../connectors/types";
import { type JdbcPayload, jdbcConfig } from "./jdbc-config";
import { createMysqlRunner } from "./mysql";
import { createPostgresRunner } from "./postgres";
import type { SqlRunner } from "./runner";

/**
 * A runner for a GENERIC_JDBC connection (see jdbc-config.ts for which payload and credential
 * keys it reads): postgresql → PostgreSQL, mysql and mariadb → MySQL; other databases are unsupported.
 */
export async function createJdbcRunner(payload: JdbcPayload, credential: Record<string, string>): Promise<SqlRunner> {
  switch (payload.db_type) {
    case "postgresql":
      return createPostgresRunner(jdbcConfig(payload, credential, 5432));
    case "mysql":
    case "mariadb":
      return createMysqlRunner(jdbcConfig(payload, credential, 3306));
    default:
      throw new ConnectorError(`GENERIC_JDBC with db_type ${payload.db_type} is not supported yet`, "unsupported");
  }
}

export { type ColumnKind, columnKind, type DialectSql, dialectSql } from "./dialects";
export type { FilterValue, ProfileColumn, SqlProfileOptions } from "./generator";
export type { JdbcConfig, JdbcPayload } from "./jdbc-config";
export { loadSchema, MAX_SCHEMA_ATTRIBUTES, profileTable } from "./profile-table";
export { DIALECTS, type Dialect, type SqlRunner, type TableRef } from "./runner";
