/**
 * Where a value departs from a provider's model shipped as zod schemas (jira.js 6 ships Jira Cloud's
 * REST API v3 models this way, generated from Atlassian's OpenAPI document): zod's own verdict on
 * kinds, required fields and formats, and, because those models are loose (they let unknown keys
 * through), every key the model does not name. The zod counterpart of dts-shapes.ts, for the fakes.
 */

import type { z } from "zod";

/** The parts of a zod 4 schema's definition the walk reads. */
interface Def {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  element?: z.ZodType;
  valueType?: z.ZodType;
  options?: z.ZodType[];
  getter?: () => z.ZodType;
  in?: z.ZodType;
}

const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** `at` followed by a zod issue path: `.key` and `[index]`. */
function pathText(at: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((s, p) => (typeof p === "number" ? `${s}[${p}]` : `${s}.${String(p)}`), at);
}

/** Keys of `value` that no object of the model names, at any depth. */
function unknownKeys(schema: z.ZodType, value: unknown, at: string, depth: number): string[] {
  if (depth > 40 || value === undefined || value === null) return [];
  const def = defOf(schema);
  switch (def.type) {
    case "object": {
      if (!isRecord(value) || !def.shape) return [];
      const shape = def.shape;
      return Object.entries(value).flatMap(([key, v]) => {
        const field = shape[key];
        return field ? unknownKeys(field, v, `${at}.${key}`, depth + 1) : [`${at}.${key}: no such field of the model`];
      });
    }
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "nonoptional":
    case "readonly":
    case "catch":
      return def.innerType ? unknownKeys(def.innerType, value, at, depth + 1) : [];
    case "array":
      return Array.isArray(value) && def.element
        ? value.flatMap((v, i) => unknownKeys(def.element!, v, `${at}[${i}]`, depth + 1))
        : [];
    case "record":
      return isRecord(value) && def.valueType
        ? Object.entries(value).flatMap(([k, v]) => unknownKeys(def.valueType!, v, `${at}.${k}`, depth + 1))
        : [];
    case "union": {
      // The branch the value fits best.
      const results = (def.options ?? []).map((o) => unknownKeys(o, value, at, depth + 1));
      return results.reduce((a, b) => (b.length < a.length ? b : a), results[0] ?? []);
    }
    case "lazy":
      return def.getter ? unknownKeys(def.getter(), value, at, depth + 1) : [];
    case "pipe":
      return def.in ? unknownKeys(def.in, value, at, depth + 1) : [];
    default:
      return [];
  }
}

/** Where `value` departs from the model (none: it conforms), as "where: reason" lines. */
export function modelErrors(schema: z.ZodType, value: unknown, at: string): string[] {
  const parsed = schema.safeParse(value);
  const issues = parsed.success ? [] : parsed.error.issues.map((i) => `${pathText(at, i.path)}: ${i.message}`);
  return [...issues, ...unknownKeys(schema, value, at, 0)];
}
