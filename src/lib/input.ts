/**
 * Checks on what a request carries, before any of it is used: every string well-formed UTF-16 (a
 * lone surrogate breaks encodeURIComponent, SigV4 signing and TextEncoder round trips far from the
 * edge), JSON nested at most MAX_JSON_DEPTH deep (deeper values overflow the stack of whatever walks
 * them recursively), and URL components whose percent-escapes decode as UTF-8. Pure functions that
 * name the offending field; the edge turns them into a 400.
 */
import type { FieldProblem } from "./errors";

/** Deepest nesting of objects and arrays in a JSON request body; the body itself is level 1. */
export const MAX_JSON_DEPTH = 32;

/** Largest JSON request body, in bytes (data uploads have the tenant's free_upload_limit instead). */
export const MAX_JSON_BODY_BYTES = 1024 * 1024;

/** Problems reported for one request at most: enough to fix it, not a second copy of a hostile body. */
export const MAX_INPUT_PROBLEMS = 20;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, "g");

// ES2024; declared here because the project's lib is ES2023.
const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed;

/** True when the string has no lone surrogate (String.prototype.isWellFormed where the runtime has it). */
export function isWellFormed(s: string): boolean {
  return nativeIsWellFormed ? nativeIsWellFormed.call(s) : !LONE_SURROGATE.test(s);
}

/** The string with each lone surrogate replaced by U+FFFD: safe to echo in an error. */
export function printable(s: string): string {
  return isWellFormed(s) ? s : s.replace(LONE_SURROGATES, "\uFFFD");
}

export const NOT_WELL_FORMED = "is not well-formed Unicode (it holds a lone UTF-16 surrogate)";
export const NOT_PERCENT_ENCODED = "is not valid percent-encoding (escapes must spell UTF-8, e.g. %C3%A9 for é)";
const tooDeep = (max: number) => `nests objects and arrays deeper than ${max} levels`;

/**
 * The problems of a parsed JSON value, up to `max` of them: each key or string that is not
 * well-formed, and each object or array below `maxDepth` levels (not looked into). `field` is the
 * path in the value ("payload.path", "items.3"), "" for the value itself.
 */
export function jsonValueProblems(value: unknown, maxDepth = MAX_JSON_DEPTH, max = MAX_INPUT_PROBLEMS): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const path: string[] = [];
  const report = (message: string) => {
    problems.push({ field: path.map(printable).join("."), message });
    return problems.length >= max;
  };
  // Recursion is bounded by maxDepth: a container one level too deep is reported, not entered.
  const visit = (v: unknown, depth: number): boolean => {
    if (typeof v === "string") return isWellFormed(v) ? false : report(NOT_WELL_FORMED);
    if (typeof v !== "object" || v === null) return false;
    if (depth > maxDepth) return report(tooDeep(maxDepth));
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        path.push(String(i));
        const full = visit(v[i], depth + 1);
        path.pop();
        if (full) return true;
      }
      return false;
    }
    for (const key of Object.keys(v)) {
      path.push(key);
      const full =
        (!isWellFormed(key) && report(`the name ${NOT_WELL_FORMED}`)) ||
        visit((v as Record<string, unknown>)[key], depth + 1);
      path.pop();
      if (full) return true;
    }
    return false;
  };
  visit(value, 1);
  return problems;
}

/** The text a percent-encoded URL component stands for; undefined when its escapes are not UTF-8. */
export function decodeComponent(raw: string): string | undefined {
  if (!raw.includes("%")) return isWellFormed(raw) ? raw : undefined;
  try {
    const decoded = decodeURIComponent(raw);
    return isWellFormed(decoded) ? decoded : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The problems of a raw query string (`?a=1&b=%ff`, as in a URL): every name and value must decode
 * (form encoding, "+" a space). `field` is the parameter's name, decoded where it can be.
 */
export function queryProblems(search: string, max = MAX_INPUT_PROBLEMS): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const query = search.startsWith("?") ? search.slice(1) : search;
  if (query === "") return problems;
  for (const pair of query.split("&")) {
    const eq = pair.indexOf("=");
    const rawName = (eq < 0 ? pair : pair.slice(0, eq)).replace(/\+/g, " ");
    const rawValue = eq < 0 ? "" : pair.slice(eq + 1).replace(/\+/g, " ");
    const name = decodeComponent(rawName);
    if (name === undefined || decodeComponent(rawValue) === undefined) {
      problems.push({ field: name ?? printable(rawName), message: NOT_PERCENT_ENCODED });
      if (problems.length >= max) break;
    }
  }
  return problems;
}

/**
 * The problems of a raw URL path (`/v2/acme/%ff`): every segment must decode. `template`, the
 * matched route's path with `:name` parameters (`/v2/:tenant/sources/:source_id`), names the
 * parameter a bad segment stands for; a segment of no parameter is reported as "".
 */
export function pathProblems(pathname: string, template?: string): FieldProblem[] {
  const segments = pathname.split("/");
  const names = (template ?? "").split("/");
  const problems: FieldProblem[] = [];
  for (let i = 0; i < segments.length; i++) {
    if (decodeComponent(segments[i]!) !== undefined) continue;
    const param = /^:([A-Za-z0-9_]+)/.exec(names[i] ?? "");
    problems.push({ field: param ? param[1]! : "", message: NOT_PERCENT_ENCODED });
  }
  return problems;
}
