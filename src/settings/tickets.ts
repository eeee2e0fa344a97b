import { and, asc, eq, gt } from "drizzle-orm";
import type { Db } from "../db";
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

async function assertNameFree(db: Db, tenantId: string, name: string, exceptId?: number) {
  const clash = await db.query.ticketTemplates.findFirst({
    where: and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.name, name)),
    columns: { id: true },
  });
  if (clash && clash.id !== exceptId) throw new ConflictError(nameTaken(name));
}

/** Creates a template; a name already used in the tenant is a 409. */
export async function createTicketTemplate(
  db: Db,
  tenantId: string,
  input: TicketTemplateInput,
  createdBy: string,
): Promise<TicketTemplateRow> {
  await assertNameFree(db, tenantId, input.name);
  const now = nowIso();
  // The unique index settles a race between two creates of one name: the loser gets no row back.
  const [row] = await db
    .insert(ticketTemplates)
    .values({ tenantId, ...input, createdBy, createdAt: now, updatedAt: now })
    .onConflictDoNothing()
    .returning();
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

/** Replaces a template's name, description and props; renaming onto another template's name is a 409. */
export async function updateTicketTemplate(
  db: Db,
  tenantId: string,
  id: number,
  input: TicketTemplateInput,
): Promise<TicketTemplateRow> {
  const current = await getTicketTemplate(db, tenantId, id);
  if (input.name !== current.name) await assertNameFree(db, tenantId, input.name, id);
  // The unique index settles a race between two renames onto one name.
  const [row] = await claimUnique(
    db
      .update(ticketTemplates)
      .set({ ...input, updatedAt: nowIso() })
      .where(and(eq(ticketTemplates.tenantId, tenantId), eq(ticketTemplates.id, id)))
      .returning(),
    nameTaken(input.name),
  );
  if (!row) throw new NotFoundError("Ticket template");
  return row;
}
