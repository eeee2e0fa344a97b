/**
 * Request bodies checked against a provider's published OpenAPI document, kept as a fixture with
 * its licence (test/fixtures/snowflake-sql-api: Snowflake's SQL API v2 specification from
 * snowflakedb/snowflake-rest-api-specs, specifications/sqlapi.yaml at commit 42671a90, Apache-2.0). An object schema that lists properties is
 * closed (a field it does not list is refused); one with none (`properties: {}`, e.g. `bindings`)
 * is a free-form map. Types, enums, required fields and `$ref`s are followed.
 */

import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";

type Schema = {
  $ref?: string;
  type?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  enum?: unknown[];
  minimum?: number;
};

/** The Snowflake SQL API document, parsed once. */
let snowflake: Record<string, any> | undefined;
export function snowflakeSqlApi(): Record<string, any> {
  snowflake ??= parse(
    readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures/snowflake-sql-api/sqlapi.yaml"), "utf8"),
  ) as Record<string, any>;
  return snowflake;
}

const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

function resolve(doc: Record<string, any>, schema: Schema): Schema {
  if (!schema.$ref) return schema;
  return schema.$ref
    .replace(/^#\//, "")
    .split("/")
    .reduce((node: any, key) => node?.[key], doc) as Schema;
}

/** Where `value` departs from `schema` of `doc`: "where: reason" lines (none: it conforms). */
export function openApiErrors(doc: Record<string, any>, raw: Schema, value: unknown, at: string): string[] {
  const schema = resolve(doc, raw);
  if (schema.enum && !schema.enum.includes(value)) return [`${at}: ${JSON.stringify(value)} is not one of the enum`];
  switch (schema.type) {
    case "string":
      return typeof value === "string" ? [] : [`${at}: ${kindOf(value)} where a string goes`];
    case "integer":
      if (!Number.isInteger(value)) return [`${at}: ${kindOf(value)} where an integer goes`];
      return schema.minimum !== undefined && (value as number) < schema.minimum
        ? [`${at}: below ${schema.minimum}`]
        : [];
    case "number":
      return typeof value === "number" ? [] : [`${at}: ${kindOf(value)} where a number goes`];
    case "boolean":
      return typeof value === "boolean" ? [] : [`${at}: ${kindOf(value)} where a boolean goes`];
    case "array":
      if (!Array.isArray(value)) return [`${at}: ${kindOf(value)} where an array goes`];
      return schema.items ? value.flatMap((v, i) => openApiErrors(doc, schema.items!, v, `${at}[${i}]`)) : [];
    case "object": {
      if (kindOf(value) !== "object") return [`${at}: ${kindOf(value)} where an object goes`];
      const record = value as Record<string, unknown>;
      const properties = schema.properties ?? {};
      const closed = Object.keys(properties).length > 0;
      const errors: string[] = [];
      for (const [key, v] of Object.entries(record)) {
        const property = properties[key];
        if (property) errors.push(...openApiErrors(doc, property, v, `${at}.${key}`));
        else if (closed) errors.push(`${at}.${key}: no such property`);
      }
      for (const key of schema.required ?? [])
        if (record[key] === undefined) errors.push(`${at}.${key}: required, missing`);
      return errors;
    }
    default:
      return [];
  }
}

/** The JSON request body schema of an operation (`paths[path][method]`). */
export function requestSchema(doc: Record<string, any>, path: string, method: string): Schema {
  const schema = doc.paths?.[path]?.[method]?.requestBody?.content?.["application/json"]?.schema as Schema | undefined;
  if (!schema) throw new Error(`${method.toUpperCase()} ${path} has no JSON request body in the document`);
  return schema;
}
