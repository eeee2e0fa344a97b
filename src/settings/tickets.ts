import { and, asc, eq, gt } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import type { Db } from "../db";
import { writeWith } from "../db/json-insert";
import { ticketTemplates } from "../db/schema";
import { claimUnique } from "../db/unique";
import { ConflictError, NotFoundError } from "../lib/errors";
import { nowIso } from "../lib/time";

/** Custom field values a Jira issue accepts: scalars, arrays and objects (never null). */
export type CustomFieldValue = string | number | boolean | unknown[] | Record<string, unknown>;

/** What a JIRA template fills in when it opens an issue (spec 2.7). */
export type JiraProps = {
  jira_project_id: string;
  jira_issue_type_id: string;
  custom_fields: Record<string, CustomFieldValue>;
};

/** A template as written by POST and PUT; PUT replaces every field. */
export interface TicketTemplateInput {
  name: string;
  description: string;
  type: "JIRA";
  props: JiraProps;
}

import type { TicketTemplateRow } from "../db/schema";

const nameTaken = (name: string) => `A ticket template named '${name}' already exists`;

/**
 * Creates a template; a name already used in the tenant is a 409. One statement, with `after` (the
 * caller's statements that belong with it) in its batch: the unique index decides the name.
 */
export async function createTicketTemplate(
  db: Db,
  tenantId: string,
  input: TicketTemplateInput,
  createdBy: string,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<TicketTemplateRow> {
  const now = nowIso();
  // Of two creates of one name (or one taken before), the loser gets no row back.
  const [row] = await writeWith(
    db,
    db
      .insert(ticketTemplates)
      .values({ tenantId, ...input, createdBy, createdAt: now, updatedAt: now })
      .onConflictDoNothing()
      .returning(),
    after,
  );
  if (!row) throw new ConflictError(nameTaken(input.name));
  return row;
}

/** One page of a tenant's templates in id order (`limit + 1` rows). */
export function listTicketTemplates(db: Db, tenantId: string, limit: number, after?: number) {
  return db.query.ticketTemplates.findMany({
    where: and(eq(ticketTemplates.tenantId, tenantId), after === undefined ? undefined : gt(ticketTemplates.id, after)),
    orderBy: asc(ticketTemplates.id),
    limit: limit + 1,
  });
}

/** A template of the tenant; another tenant's or an unknown one is a 404. */
export async function getTicketTemplate(db: Db, tenantId: string, id: number): Promise<TicketTemplateRow> {
  const row = await db.query.ticketTemplates.findFirst({
    where: and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, id)),
  });
  if (!row) throw new NotFoundError("Ticket template");
  return row;
}

/**
 * Replaces a template's name, description and props; renaming onto another template's name is a
 * 409 (the unique index decides it), an unknown template a 404. One statement, with `after` in its
 * batch.
 */
export async function updateTicketTemplate(
  db: Db,
  tenantId: string,
  id: number,
  input: TicketTemplateInput,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<TicketTemplateRow> {
  const [row] = await claimUnique(
    writeWith(
      db,
      db
        .update(ticketTemplates)
        .set({ ...input, updatedAt: nowIso() })
        .where(and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, id)))
        .returning(),
      after,
    ),
    nameTaken(input.name),
  );
  if (!row) throw new NotFoundError("Ticket template");
  return row;
}
