/**
 * Names a database can hold. A quoted identifier takes almost any text, but not all: no database
 * keeps a NUL in a name (PostgreSQL's protocol ends strings at it, MySQL refuses U+0000), control
 * characters are never part of a real name (and would not survive logs or the dashboard), and
 * PostgreSQL and MySQL/MariaDB have limits of their own. A name past them must be refused when it
 * is saved (400), never sent: PostgreSQL cuts a long name short, so it would name another table,
 * and a NUL breaks the statement on the wire.
 */

import type { Dialect, TableRef } from "./runner";

/** Whether `s` holds a C0 control (NUL, tab, line breaks…), DEL or a C1 control. */
function hasControlCharacter(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c <= 0x1f || (c >= 0x7f && c <= 0x9f)) return true;
  }
  return false;
}

/** PostgreSQL: NAMEDATALEN - 1 bytes (longer names are cut short); Redshift: 127 bytes. */
const MAX_BYTES: Partial<Record<Dialect, number>> = { postgres: 63, redshift: 127 };
/** MySQL and MariaDB: 64 characters for databases, tables and columns. */
const MYSQL_MAX_CHARS = 64;

const utf8Bytes = (s: string) => new TextEncoder().encode(s).byteLength;

/** What no name of any store may hold, whatever the database. */
export function controlCharacterProblem(name: string): string | undefined {
  if (!hasControlCharacter(name)) return undefined;
  return name.includes("\u0000")
    ? "holds a NUL character (U+0000), which no database name can hold"
    : "holds a control character (a tab, a line break, U+0001–U+001F, U+007F–U+009F), which a name cannot hold";
}

/** Why `name` cannot name a table, schema or column in `dialect` (any database when undefined); undefined when it can. */
export function identifierProblem(name: string, dialect?: Dialect): string | undefined {
  const control = controlCharacterProblem(name);
  if (control) return control;
  const maxBytes = dialect && MAX_BYTES[dialect];
  if (maxBytes && utf8Bytes(name) > maxBytes) {
    const db = dialect === "postgres" ? "PostgreSQL" : "Redshift";
    return `is longer than ${db}'s ${maxBytes} bytes (UTF-8), the longest name it keeps`;
  }
  if (dialect === "mysql") {
    if ([...name].length > MYSQL_MAX_CHARS) return `is longer than MySQL's ${MYSQL_MAX_CHARS} characters`;
    if (/[\u{10000}-\u{10ffff}]/u.test(name)) {
      return "holds a character outside the Basic Multilingual Plane (e.g. an emoji), which MySQL and MariaDB names cannot hold";
    }
    if (name.endsWith(" ")) return "ends with a space, which MySQL and MariaDB names cannot";
  }
  return undefined;
}

/** Why a filter or segment value cannot be compared in `dialect`: PostgreSQL text holds no NUL. */
export function valueProblem(value: unknown, dialect?: Dialect): string | undefined {
  if (typeof value !== "string" || !value.includes("\u0000")) return undefined;
  return dialect === "postgres" || dialect === "redshift"
    ? "holds a NUL character (U+0000), which PostgreSQL text cannot hold"
    : undefined;
}

/** The db_types that have a dialect (dialectOfDbType): every other db_type names nothing checked. */
export const DB_TYPES_WITH_DIALECT = [
  "postgresql",
  "mysql",
  "mariadb",
  "redshift",
  "snowflake",
  "bigquery",
  "databricks",
] as const;

/** The SQL dialect behind a connection's db_type (GENERIC_JDBC's database, or the warehouse); undefined for files and others. */
export function dialectOfDbType(dbType: string | null | undefined): Dialect | undefined {
  switch (dbType) {
    case "postgresql":
      return "postgres";
    case "mysql":
    case "mariadb":
      return "mysql";
    case "redshift":
    case "snowflake":
    case "bigquery":
    case "databricks":
      return dbType;
    default:
      return undefined;
  }
}

/** The parts of a table reference `dialect` cannot hold, with their names in a table reference. */
export function tableRefProblems(table: TableRef, dialect?: Dialect): { part: string; message: string }[] {
  const parts: [string, string | undefined][] = [
    ["catalog", table.catalog],
    ["schema", table.schema],
    ["table", table.name],
  ];
  return parts.flatMap(([part, name]) => {
    const message = name === undefined ? undefined : identifierProblem(name, dialect);
    return message ? [{ part, message }] : [];
  });
}
