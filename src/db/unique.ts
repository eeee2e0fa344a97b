/**
 * The unique keys that guard what the API calls unique, and what a violation of one means.
 * D1 has no cross-request transactions: a name checked free and then inserted can be taken in
 * between, so the index is the source of truth and the write that loses the race fails on it.
 * That failure becomes a ConflictError (409), the answer the friendly pre-check gives, never a 500.
 */

import { ConflictError } from "../lib/errors";

/** A UNIQUE (or PRIMARY KEY) constraint failure as SQLite reports it: the table and the key's columns. */
export interface UniqueViolation {
  table: string;
  columns: string[];
}

/**
 * SQLite's message, as D1 passes it on. Anchored: drizzle's own wrapper error quotes the query's
 * parameters (a user's name could read "UNIQUE constraint failed: …"), so only its causes count.
 */
const UNIQUE_FAILED = /^(?:D1_ERROR: )?UNIQUE constraint failed: (\w+\.\w+(?:, \w+\.\w+)*)/;

/** The UNIQUE constraint failure in an error or its causes; undefined for any other error. */
export function uniqueViolation(err: unknown): UniqueViolation | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    const match = UNIQUE_FAILED.exec(e.message);
    if (!match) continue;
    const qualified = match[1]!.split(", ").map((c) => c.split("."));
    return { table: qualified[0]![0]!, columns: qualified.map(([, column]) => column!) };
  }
  return undefined;
}

/** The thing and its field (in the API's words) each guarded key makes unique, by `table(columns)`. */
const GUARDED: Record<string, { thing: string; field: string }> = {
  "projects(tenant_id, name)": { thing: "project", field: "name" },
  // Connection names are unique per scope: a project's (first key) or the tenant's GLOBAL ones.
  "connections(tenant_id, project_id, name)": { thing: "connection", field: "name" },
  "connections(tenant_id, name)": { thing: "connection", field: "name" },
  "ticket_templates(tenant_id, name)": { thing: "ticket template", field: "name" },
  "project_members(project_id, user_email)": { thing: "project member", field: "email" },
  "notification_channels(tenant_id, name)": { thing: "notification channel", field: "name" },
};

/**
 * A failed write that collided with a guarded unique key, as a ConflictError naming the field
 * (or with `detail`, the pre-check's words); undefined for any other error, including a clash
 * on a key no caller chooses (an id).
 */
export function conflictOf(err: unknown, detail?: string): ConflictError | undefined {
  const violation = uniqueViolation(err);
  const guarded = violation && GUARDED[`${violation.table}(${violation.columns.join(", ")})`];
  if (!guarded) return undefined;
  return new ConflictError(detail ?? `A ${guarded.thing} with this ${guarded.field} already exists`);
}

/** Awaits a write; losing a race on a guarded unique key throws ConflictError(detail), anything else is rethrown. */
export async function claimUnique<T>(write: PromiseLike<T>, detail: string): Promise<T> {
  try {
    return await write;
  } catch (err) {
    throw conflictOf(err, detail) ?? err;
  }
}

const FOREIGN_KEY_FAILED = /^(?:D1_ERROR: )?FOREIGN KEY constraint failed/;

/**
 * A write that referred to a row deleted meanwhile (e.g. an asset created in a project being
 * deleted) fails on its foreign key: a ConflictError, never a 500. Undefined for any other error.
 */
export function vanishedReferenceOf(err: unknown): ConflictError | undefined {
  for (let e: unknown = err; e instanceof Error; e = e.cause) {
    if (FOREIGN_KEY_FAILED.test(e.message)) {
      return new ConflictError("Something this request refers to was deleted meanwhile; nothing was written");
    }
  }
  return undefined;
}
