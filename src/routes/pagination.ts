import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { ApiError } from "./problems";

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;

/** `limit` and `cursor` query parameters shared by every list endpoint. */
export const PageQuery = z.object({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_PAGE_SIZE)
    .optional()
    .openapi({
      description: `Page size (1-${MAX_PAGE_SIZE}); without it the whole list comes back (after \`cursor\`, if given)`,
    }),
  cursor: z
    .string()
    .max(512)
    .optional()
    .openapi({ description: 'Opaque cursor from the `rel="next"` Link header of the previous page' }),
});
export type PageQuery = z.infer<typeof PageQuery>;

type CursorKey = string | number;

/** Encodes the sort key of the last item of a page as an opaque cursor. */
export function encodeCursor(key: readonly CursorKey[]): string {
  return btoa(JSON.stringify(key)).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "");
}

/** Decodes a cursor made by `encodeCursor`; a cursor that was not is a 400. */
export function decodeCursor(cursor: string): CursorKey[] {
  try {
    const json = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    const key = JSON.parse(json);
    if (Array.isArray(key) && key.every((k) => typeof k === "string" || typeof k === "number")) return key;
  } catch {
    // fall through
  }
  throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
}

/**
 * Given the rows of a query that asked for `limit + 1` rows, returns the page and, when there is
 * more, sets `Link: <…?cursor=…>; rel="next"` on the response.
 */
export function takePage<T>(c: Context, rows: T[], limit: number, keyOf: (row: T) => CursorKey[]): T[] {
  if (rows.length <= limit) return rows;
  const page = rows.slice(0, limit);
  const next = new URL(c.req.url);
  next.searchParams.set("cursor", encodeCursor(keyOf(page[page.length - 1]!)));
  next.searchParams.set("limit", String(limit));
  c.header("Link", `<${next.pathname}${next.search}>; rel="next"`);
  return page;
}

/**
 * A list as its endpoint answers it: one page when the client sent `limit` (with a `Link` to the
 * next), else every item after `cursor`, read from D1 in chunks of MAX_PAGE_SIZE so no query
 * grows past D1's limits. `read(limit, cursor)` returns up to `limit + 1` rows after `cursor`.
 */
export async function listed<T>(
  c: Context,
  query: { limit?: number; cursor?: string },
  read: (limit: number, cursor: string | undefined) => Promise<T[]>,
  keyOf: (row: T) => CursorKey[],
): Promise<T[]> {
  if (query.limit !== undefined) return takePage(c, await read(query.limit, query.cursor), query.limit, keyOf);
  const all: T[] = [];
  let cursor = query.cursor;
  for (;;) {
    const rows = await read(MAX_PAGE_SIZE, cursor);
    if (rows.length <= MAX_PAGE_SIZE) return all.concat(rows);
    const chunk = rows.slice(0, MAX_PAGE_SIZE);
    all.push(...chunk);
    cursor = encodeCursor(keyOf(chunk[chunk.length - 1]!));
  }
}

/** The single sort key after which a page starts, from its cursor, checked to be of the expected type. */
export function afterKey(cursor: string | undefined, type: "string"): string | undefined;
export function afterKey(cursor: string | undefined, type: "number"): number | undefined;
export function afterKey(cursor: string | undefined, type: "string" | "number"): string | number | undefined {
  if (cursor === undefined) return undefined;
  const [key, ...rest] = decodeCursor(cursor);
  if (rest.length > 0 || typeof key !== type) {
    throw ApiError.badRequest("Invalid cursor", [{ path: "query.cursor", message: "not a cursor of this list" }]);
  }
  return key;
}
