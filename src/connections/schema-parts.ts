/** Pieces of zod schema that several connection types' payloads and assets are made of. */

import { z } from "zod";
import { controlCharacterProblem } from "../scan/sql/identifiers";

/** A required text field, trimmed, at most `max` characters. */
export const text = (max = 1024) => z.string().trim().min(1).max(max);

/** A TCP port written as a string ("443"), 1-65535. */
export const portString = z
  .string()
  .regex(/^\d{1,5}$/, "must be a port number (1-65535)")
  .refine((p) => Number(p) >= 1 && Number(p) <= 65535, "must be a port number (1-65535)");

/**
 * An object-storage endpoint other than the provider's own (an S3-compatible store, an
 * emulator): http(s), no user info, query or fragment, so it cannot smuggle a credential.
 */
export const storageEndpoint = z
  .url({ protocol: /^https?$/ })
  .max(1024)
  .refine((u) => {
    // Zod runs refinements even after the URL check failed: an unparsable value is refused here too.
    try {
      const url = new URL(u);
      return !url.username && !url.password && !url.search && !url.hash;
    } catch {
      return false;
    }
  }, "must be an http(s) URL without credentials, query or fragment")
  .optional();

/** A warehouse API endpoint other than the provider's (a private endpoint, or a test server). */
export const apiEndpoint = (provider: string) =>
  storageEndpoint.meta({ description: `SQL API base URL; default ${provider}` });

/** An AWS-style region name (eu-west-1). */
export const regionName = z.string().regex(/^[a-z0-9-]{1,64}$/, "must be a region name such as eu-west-1");

// ---- Asset payloads ----

/** A name no store can hold (a NUL, a control character) is refused whatever the database. */
export const holdableName = (name: string, ctx: z.core.$RefinementCtx) => {
  const problem = controlCharacterProblem(name);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
};

/** A database, catalog, schema, dataset or table name; what its database cannot hold is checked with its connection. */
export const identifier = z.string().trim().min(1).max(1024).superRefine(holdableName);

/** The asset payload of a file connection, in the API's words. */
export const FILE_ASSET_DOC =
  "{path (object key or prefix in the connection's bucket; * and ? are wildcards), format: csv | ndjson | json | parquet}";

/** The asset payload of a file connection: a key or prefix in its bucket, and the files' format. */
export function filePayload() {
  return z.strictObject({
    /** Object key or prefix inside the connection's bucket; `*` and `?` are wildcards. */
    path: z.string().trim().min(1).max(1024),
    format: z.enum(["csv", "ndjson", "json", "parquet"]),
  });
}
