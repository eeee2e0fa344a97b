import { createJdbcRunner, type SqlRunner } from "../../../../src/scan/sql";
import type { JdbcPayload } from "../../../../src/scan/sql/jdbc-config";

/** The local servers: PostgreSQL 15 (trust auth) and MariaDB 10.11 (root, empty password). */
export const DATABASES = {
  postgres: {
    payload: {
      db_type: "postgresql",
      db_or_schema: "test",
      connection_properties: { host: "127.0.0.1", port: "5432", ssl: "disable" },
    } satisfies JdbcPayload,
    credential: { user: "postgres", password: "" },
    schema: "public",
  },
  mysql: {
    payload: {
      db_type: "mariadb",
      db_or_schema: "test",
      connection_properties: { host: "127.0.0.1", port: "3306", ssl: "disable" },
    } satisfies JdbcPayload,
    credential: { user: "root", password: "" },
    schema: "test",
  },
} as const;
export type TestDatabase = keyof typeof DATABASES;

export const runnerFor = (db: TestDatabase): Promise<SqlRunner> =>
  createJdbcRunner(DATABASES[db].payload, { ...DATABASES[db].credential });

/** A table name no other test run uses. */
export const uniqueTable = (prefix: string) =>
  `${prefix}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6).toString(36)}`;
