/**
 * The request and answer shapes a provider's own SDK declares, read at run time from its .d.ts
 * files (TypeScript's parser: the interfaces, string-literal unions and AWS's `const` enums), so a
 * fake can refuse what the provider would: a field the SDK does not name, a value of another kind,
 * an enum value it does not list, a required field left out. Used by the fakes of
 * test/support (Node side) with the models of @databricks/sdk-experimental (generated from
 * Databricks' OpenAPI) and @aws-sdk/client-* (generated from the services' Smithy models).
 */

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type * as TS from "typescript";

const require = createRequire(import.meta.url);
// Node's require, not the test runner's module graph (which looks for a source map typescript lacks).
const ts = require("typescript") as typeof TS;

/** One .d.ts file's declarations, and the files its `import * as x` names. */
interface Scope {
  interfaces: Map<string, TS.InterfaceDeclaration>;
  aliases: Map<string, TS.TypeNode>;
  /** AWS enums: `export declare const X: { readonly A: "A"; … }`. */
  constEnums: Map<string, Set<string>>;
  namespaces: Map<string, string>;
  /** Names imported from sibling files (AWS: models_0 imports its enums from ./enums). */
  imported: Map<string, string>;
}

const scopes = new Map<string, Scope>();

function scopeOf(file: string): Scope {
  const known = scopes.get(file);
  if (known) return known;
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const scope: Scope = {
    interfaces: new Map(),
    aliases: new Map(),
    constEnums: new Map(),
    namespaces: new Map(),
    imported: new Map(),
  };
  for (const node of source.statements) {
    if (ts.isInterfaceDeclaration(node)) scope.interfaces.set(node.name.text, node);
    else if (ts.isTypeAliasDeclaration(node)) scope.aliases.set(node.name.text, node.type);
    else if (ts.isVariableStatement(node)) {
      for (const d of node.declarationList.declarations) {
        if (ts.isIdentifier(d.name) && d.type && ts.isTypeLiteralNode(d.type)) {
          const values = new Set<string>();
          for (const m of d.type.members) {
            if (
              ts.isPropertySignature(m) &&
              m.type &&
              ts.isLiteralTypeNode(m.type) &&
              ts.isStringLiteral(m.type.literal)
            )
              values.add(m.type.literal.text);
          }
          scope.constEnums.set(d.name.text, values);
        }
      }
    } else if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const spec = node.moduleSpecifier.text;
      if (!spec.startsWith(".")) continue;
      const bindings = node.importClause?.namedBindings;
      if (bindings && ts.isNamespaceImport(bindings)) {
        // `import * as compute from "../compute"`: that folder's model.d.ts.
        scope.namespaces.set(bindings.name.text, join(dirname(file), spec, "model.d.ts"));
      } else if (bindings && ts.isNamedImports(bindings)) {
        for (const el of bindings.elements) scope.imported.set(el.name.text, join(dirname(file), `${spec}.d.ts`));
      }
    }
  }
  scopes.set(file, scope);
  return scope;
}

/** The .d.ts file of a package, by its path inside the package. */
export const packageFile = (pkg: string, path: string) => join(dirname(require.resolve(`${pkg}/package.json`)), path);

type Named = { file: string; name: string };

/** Where a type name is declared, seen from `file`. */
function lookup(file: string, name: TS.EntityName): Named | undefined {
  const scope = scopeOf(file);
  if (ts.isQualifiedName(name)) {
    const ns = ts.isIdentifier(name.left) ? scope.namespaces.get(name.left.text) : undefined;
    return ns ? { file: ns, name: name.right.text } : undefined;
  }
  const text = name.text;
  if (scope.interfaces.has(text) || scope.aliases.has(text) || scope.constEnums.has(text)) return { file, name: text };
  const from = scope.imported.get(text);
  return from ? { file: from, name: text } : undefined;
}

const kindOf = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** Where `value` departs from the type node (seen from `file`): "where: reason" lines. */
function check(file: string, type: TS.TypeNode, value: unknown, at: string, depth: number): string[] {
  if (depth > 40) return [];
  switch (type.kind) {
    case ts.SyntaxKind.StringKeyword:
      return typeof value === "string" ? [] : [`${at}: ${kindOf(value)} where a string goes`];
    case ts.SyntaxKind.NumberKeyword:
      return typeof value === "number" ? [] : [`${at}: ${kindOf(value)} where a number goes`];
    case ts.SyntaxKind.BooleanKeyword:
      return typeof value === "boolean" ? [] : [`${at}: ${kindOf(value)} where a boolean goes`];
    case ts.SyntaxKind.AnyKeyword:
    case ts.SyntaxKind.UnknownKeyword:
      return [];
  }
  if (ts.isParenthesizedTypeNode(type)) return check(file, type.type, value, at, depth);
  if (ts.isLiteralTypeNode(type)) {
    if (ts.isStringLiteral(type.literal))
      return value === type.literal.text ? [] : [`${at}: ${JSON.stringify(value)} is not "${type.literal.text}"`];
    return [];
  }
  if (ts.isArrayTypeNode(type)) {
    if (!Array.isArray(value)) return [`${at}: ${kindOf(value)} where a list goes`];
    return value.flatMap((v, i) => check(file, type.elementType, v, `${at}[${i}]`, depth + 1));
  }
  if (ts.isUnionTypeNode(type)) {
    const branches = type.types.filter((t) => t.kind !== ts.SyntaxKind.UndefinedKeyword);
    const results = branches.map((t) => check(file, t, value, at, depth + 1));
    if (results.some((r) => r.length === 0)) return [];
    const literals = branches.every((t) => ts.isLiteralTypeNode(t));
    if (literals) return [`${at}: ${JSON.stringify(value)} is none of ${branches.map((t) => t.getText()).join(" | ")}`];
    return results.reduce((a, b) => (b.length < a.length ? b : a));
  }
  if (ts.isTypeLiteralNode(type)) return checkMembers(file, type.members, value, at, depth, "the literal type");
  if (ts.isIndexedAccessTypeNode(type)) {
    // AWS: (typeof X)[keyof typeof X] is one of the const enum X's values.
    const obj = ts.isParenthesizedTypeNode(type.objectType) ? type.objectType.type : type.objectType;
    if (ts.isTypeQueryNode(obj) && ts.isIdentifier(obj.exprName)) {
      const values = scopeOf(file).constEnums.get(obj.exprName.text);
      if (values)
        return values.has(value as string) ? [] : [`${at}: ${JSON.stringify(value)} is no ${obj.exprName.text}`];
    }
    return [];
  }
  if (ts.isTypeReferenceNode(type)) {
    const name = ts.isIdentifier(type.typeName) ? type.typeName.text : undefined;
    const args = type.typeArguments ?? [];
    if ((name === "Array" || name === "ReadonlyArray") && args[0]) {
      if (!Array.isArray(value)) return [`${at}: ${kindOf(value)} where a list goes`];
      return value.flatMap((v, i) => check(file, args[0]!, v, `${at}[${i}]`, depth + 1));
    }
    if (name === "Record" && args[1]) {
      if (kindOf(value) !== "object") return [`${at}: ${kindOf(value)} where a map goes`];
      return Object.entries(value as object).flatMap(([k, v]) => check(file, args[1]!, v, `${at}.${k}`, depth + 1));
    }
    // Timestamps and blobs travel as text or numbers in JSON.
    if (name === "Date") return typeof value === "string" || typeof value === "number" ? [] : [`${at}: not a time`];
    if (name === "Uint8Array") return typeof value === "string" ? [] : [`${at}: not base64 text`];
    const target = lookup(file, type.typeName);
    if (!target) return [];
    return checkNamed(target, value, at, depth + 1);
  }
  return [];
}

function checkNamed(target: Named, value: unknown, at: string, depth: number): string[] {
  const scope = scopeOf(target.file);
  const iface = scope.interfaces.get(target.name);
  if (iface) return checkMembers(target.file, iface.members, value, at, depth, target.name);
  const alias = scope.aliases.get(target.name);
  if (alias) return check(target.file, alias, value, at, depth);
  const values = scope.constEnums.get(target.name);
  if (values) return values.has(value as string) ? [] : [`${at}: ${JSON.stringify(value)} is no ${target.name}`];
  return [];
}

function checkMembers(
  file: string,
  members: TS.NodeArray<TS.TypeElement>,
  value: unknown,
  at: string,
  depth: number,
  what: string,
): string[] {
  if (kindOf(value) !== "object") return [`${at}: ${kindOf(value)} where ${what} goes`];
  const fields = new Map<string, TS.PropertySignature>();
  for (const m of members)
    if (ts.isPropertySignature(m) && m.name && ts.isIdentifier(m.name)) fields.set(m.name.text, m);
  const errors: string[] = [];
  const record = value as Record<string, unknown>;
  for (const [key, v] of Object.entries(record)) {
    const field = fields.get(key);
    if (!field) errors.push(`${at}.${key}: no such field of ${what}`);
    else if (v !== undefined && field.type) errors.push(...check(file, field.type, v, `${at}.${key}`, depth));
  }
  for (const [key, field] of fields) {
    if (!field.questionToken && record[key] === undefined) errors.push(`${at}.${key}: required by ${what}, missing`);
  }
  return errors;
}

/** Where `value` departs from the interface (or alias) `name` declared in `file` (none: it conforms). */
export function shapeErrors(file: string, name: string, value: unknown, at = name): string[] {
  if (!scopeOf(file).interfaces.has(name) && !scopeOf(file).aliases.has(name)) {
    throw new Error(`${name} is not declared in ${file}`);
  }
  return checkNamed({ file, name }, value, at, 0);
}

/** The model files the fakes check against. */
export const MODELS = {
  databricksJobs: packageFile("@databricks/sdk-experimental", "dist/apis/jobs/model.d.ts"),
  databricksSql: packageFile("@databricks/sdk-experimental", "dist/apis/sql/model.d.ts"),
  emr: packageFile("@aws-sdk/client-emr", "dist-types/models/models_0.d.ts"),
  redshiftData: packageFile("@aws-sdk/client-redshift-data", "dist-types/models/models_0.d.ts"),
} as const;
