/** GENERIC_JDBC: tables of a database reached over TCP (PostgreSQL, MySQL, MariaDB), profiled by SQL. */

import { z } from "zod";
import { createJdbcRunner, tableOf } from "../scan/sql";
import { JDBC_CONNECTION_PROPERTIES, jdbcUrlProblem } from "../scan/sql/jdbc-config";
import { defineConnection, type StoredPayload, sameValue } from "./module";
import { identifier, text } from "./schema-parts";
import { sparkFields } from "./spark";

/** Databases a GENERIC_JDBC connection can reach (the driver is chosen by this value). */
export const JDBC_DB_TYPES = ["postgresql", "mysql", "mariadb", "sqlserver", "oracle"] as const;

export const GenericJdbcPayload = z
  .strictObject({
    db_type: z
      .enum(JDBC_DB_TYPES)
      .meta({ description: "The database's kind; scans support postgresql, mysql and mariadb" }),
    db_or_schema: text().meta({
      description:
        "The database to connect to (a MySQL/MariaDB database is its schema); connection_properties.database wins",
    }),
    connection_properties: z
      .object(
        Object.fromEntries(
          Object.entries(JDBC_CONNECTION_PROPERTIES).map(([key, description]) => [
            key,
            z.string().max(4096).optional().meta({ description }),
          ]),
        ),
      )
      .catchall(z.string().max(4096))
      .refine((m) => Object.keys(m).length <= 100, "at most 100 properties")
      .superRefine((m, ctx) => {
        for (const key of Object.keys(m).filter((k) => k.length < 1 || k.length > 256)) {
          ctx.addIssue({ code: "custom", path: [key], message: "a property name is 1-256 characters" });
        }
        // A JDBC url is parsed here once, so a malformed one is a 400 now, not a failed scan later.
        const problem = m.url === undefined ? undefined : jdbcUrlProblem(m.url);
        if (problem) ctx.addIssue({ code: "custom", path: ["url"], message: problem });
      })
      .default({})
      .meta({
        description:
          "Driver properties, string to string: those listed are read by scans; any other is kept as a custom parameter",
      }),
  })
  .meta({ id: "GenericJdbcPayload" });
/**
 * As a row is read: the shape only. What the request schema refuses since (a malformed url) is
 * left to jdbc-config, whose error names the field, so a connection stored before the rule fails
 * its scan as the user's input.
 */
const StoredGenericJdbcPayload = z.object({
  db_type: z.string(),
  db_or_schema: z.string(),
  connection_properties: z.record(z.string(), z.string().optional()).default({}),
});
export type GenericJdbcPayload = z.infer<typeof StoredGenericJdbcPayload>;

/**
 * JDBC connection properties that change nothing about where or how the driver connects. Every
 * other property (host, port, url, ssl, and any a future driver option may read) counts as part
 * of the address: new keys are safe by default.
 */
const HARMLESS_JDBC_PROPERTIES = new Set(["connect_timeout", "schema", "currentSchema", "database"]);

/** The database type and every connection property but the harmless ones decide where the credential goes. */
function changedAddress(before: StoredPayload, after: StoredPayload): string[] {
  const changed = sameValue(before.db_type, after.db_type) ? [] : ["db_type"];
  const props = (p: StoredPayload): StoredPayload => {
    const value = p.connection_properties;
    return typeof value === "object" && value !== null ? { ...value } : {};
  };
  const [was, now] = [props(before), props(after)];
  for (const key of [...new Set([...Object.keys(was), ...Object.keys(now)])].sort()) {
    if (!HARMLESS_JDBC_PROPERTIES.has(key) && !sameValue(was[key], now[key])) {
      changed.push(`connection_properties.${key}`);
    }
  }
  return changed;
}

const JdbcAsset = z.strictObject({ schema: identifier.optional(), table: identifier });

export const genericJdbc = defineConnection<
  "GENERIC_JDBC",
  GenericJdbcPayload,
  "GENERIC_MAP",
  z.infer<typeof JdbcAsset>
>({
  type: "GENERIC_JDBC",
  payload: GenericJdbcPayload,
  stored: StoredGenericJdbcPayload,
  credentialType: () => "GENERIC_MAP",
  changedAddress,
  dbType: (payload) => payload.db_type,
  /** The database comes from the connection's db_or_schema; schema only where the database has them. */
  asset: JdbcAsset,
  docs: {
    asset: "{schema (opt), table} (the database comes from the connection's db_or_schema)",
    dbType: "payload.db_type",
  },
  sqlRunner: ({ payload, credential }, options) => createJdbcRunner(payload, credential.payload, options.policy),
  // The JDBC URL, user and password are the cluster's secrets: never sent in the job's arguments
  // (docs/resources/light-and-full-scans.md, "Deploying the Spark job").
  sparkSource: (payload, { asset, request }) => {
    const { db_type } = sparkFields("GENERIC_JDBC", z.looseObject({ db_type: z.string().optional() }), payload);
    const t = tableOf(asset, request.table);
    return { kind: "jdbc", table: [t.schema, t.name].filter(Boolean).join("."), ...(db_type ? { db_type } : {}) };
  },
});
