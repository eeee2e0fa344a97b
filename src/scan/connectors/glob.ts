import { ConnectorError, type StoredObject } from "./types";

/**
 * Path patterns for object listings: `*` matches within one path segment, `**` across any
 * depth, `?` one character other than "/". Stores list by the literal prefix before the first
 * wildcard (their one server-side filter) and the RegExp keeps the keys that match.
 */
export interface KeyPattern {
  /** The literal part before the first wildcard: what the store lists. */
  prefix: string;
  /** Whether a listed key matches the whole pattern. */
  matches(key: string): boolean;
  /** The compiled expression, anchored at both ends. */
  regex: RegExp;
}

const WILDCARD = /[*?]/;

const escapeRegex = (s: string) => s.replace(/[.+^${}()|[\]\\]/g, "\\$&");

/** How a listing reads its pattern. */
export interface ListOptions {
  /**
   * The asset option `resolve_wildcards_to_folders: 'true'`: a wildcard pattern may match a
   * folder, and then stands for every object below it (`nested/*` → the files in nested's
   * subfolders, at any depth).
   */
  folders?: boolean;
}

/**
 * Compiles a path pattern. A plain key matches only itself; a key ending in "/" matches every
 * object below that folder, at any depth.
 */
export function compileKeyPattern(pattern: string, options: ListOptions = {}): KeyPattern {
  const first = pattern.search(WILDCARD);
  if (first < 0) {
    const regex = pattern.endsWith("/") ? new RegExp(`^${escapeRegex(pattern)}.*$`, "s") : exact(pattern);
    return { prefix: pattern, regex, matches: (key) => regex.test(key) };
  }
  let source = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === "*" && pattern[i + 1] === "*") {
      const atSegmentStart = i === 0 || pattern[i - 1] === "/";
      // A run of stars ("***") means "**" too.
      while (pattern[i + 1] === "*") i++;
      if (atSegmentStart && pattern[i + 1] === "/") {
        // "a/**/b" also matches "a/b": the folders in between are optional.
        source += "(?:.*/)?";
        i++;
      } else {
        source += ".*";
      }
    } else if (c === "*") {
      source += "[^/]*";
    } else if (c === "?") {
      source += "[^/]";
    } else {
      source += escapeRegex(c);
    }
  }
  // "s": keys may contain newlines, and ".*" must still cross them.
  const regex = new RegExp(options.folders ? `^${source}(?:/.*)?$` : `^${source}$`, "s");
  return { prefix: pattern.slice(0, first), regex, matches: (key) => regex.test(key) };
}

function exact(key: string): RegExp {
  return new RegExp(`^${escapeRegex(key)}$`, "s");
}

/** Folder markers ("dir/", zero bytes) that consoles create: never data files. */
export const isFolderMarker = (key: string) => key.endsWith("/");

/** At most this many objects per listing: a pattern matching more is a mistake, not a scan. */
export const MAX_LISTED_OBJECTS = 100_000;

/** One page of a store's listing and the token of the next page, if any. */
export interface ListingPage {
  objects: StoredObject[];
  next?: string;
}

/**
 * Lists every object matching `pattern`, page by page, from a store whose only server-side
 * filter is a key prefix. Folder markers are left out; keys come back in lexicographic order.
 */
export async function listMatching(
  pattern: string,
  listPage: (prefix: string, token: string | undefined) => Promise<ListingPage>,
  options: ListOptions = {},
  limit = MAX_LISTED_OBJECTS,
): Promise<StoredObject[]> {
  const { prefix, matches } = compileKeyPattern(pattern, options);
  const found: StoredObject[] = [];
  let token: string | undefined;
  do {
    const page = await listPage(prefix, token);
    for (const object of page.objects) {
      if (isFolderMarker(object.key) || !matches(object.key)) continue;
      if (found.length >= limit) {
        throw new ConnectorError(`'${pattern}' matches more than ${limit} objects: narrow the path`, "invalid");
      }
      found.push(object);
    }
    // A page without a token is the last; a repeated token would loop forever.
    if (page.next !== undefined && page.next === token) break;
    token = page.next || undefined;
  } while (token !== undefined);
  return found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/** RFC 3986 percent-encoding (encodeURIComponent leaves !'()* as they are). */
export const encodeRfc3986 = (s: string) =>
  encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** An object key as a URL path: each segment encoded, the "/" between them kept. */
export const encodeKeyPath = (key: string) => key.split("/").map(encodeRfc3986).join("/");

/** A query string whose bytes on the wire are exactly what SigV4 canonicalises. */
export function queryString(params: Record<string, string | number | undefined>): string {
  return Object.entries(params)
    .filter((e): e is [string, string | number] => e[1] !== undefined)
    .map(([k, v]) => `${encodeRfc3986(k)}=${encodeRfc3986(String(v))}`)
    .join("&");
}
