import { and, asc, eq, gt, isNotNull, isNull, ne, notExists, or, type SQL, sql } from "drizzle-orm";
import type { BatchItem } from "drizzle-orm/batch";
import { alias } from "drizzle-orm/sqlite-core";
import {
  CONNECTION_PAYLOADS,
  type ConnectionCredential,
  type CredentialInput,
  changedAddressFields,
  deriveDbType,
  NO_CREDENTIAL,
  newSealId,
  requiredCredentialType,
  sealCredential,
} from "../connections";
import type { Db } from "../db";
import { insertWhere, writeWith } from "../db/json-insert";
import type { ConnectionRow } from "../db/schema";
import { assets, type ConnectionType, connections } from "../db/schema";
import { claimUnique } from "../db/unique";
import type { SecretBox } from "../lib/crypto";
import { ConflictError, type FieldProblem, InvalidInputError, NotFoundError } from "../lib/errors";
import { GOOGLE_TOKEN_URI, type OutboundPolicy } from "../lib/outbound";
import { inJsonList } from "../lib/sql";
import { nowIso } from "../lib/time";

export { type ConnectionCredential, deriveDbType, openConnectionCredential } from "../connections";

/** A new connection, validated against its type (payload and credential, spec 2.2); UPLOAD has no credential. */
export interface ConnectionDefinition {
  name: string;
  type: ConnectionType;
  payload?: Record<string, unknown>;
  credential?: CredentialInput;
}

/** A partial update: only what is sent changes; the payload is checked against the (new) type here. */
export interface ConnectionChanges {
  name?: string;
  type?: ConnectionType;
  payload?: Record<string, unknown>;
  credential?: CredentialInput;
}

/**
 * Which connections a caller sees: from a project, its own plus the tenant's GLOBAL ones; from
 * the tenant, the GLOBAL ones plus those of the readable projects (undefined = every project).
 */
export type ConnectionVisibility = { projectId: number } | { projectIds: number[] | undefined };

function visibleWhere(tenantId: string, v: ConnectionVisibility): SQL | undefined {
  let scope: SQL | undefined;
  if ("projectId" in v) scope = or(isNull(connections.projectId), eq(connections.projectId, v.projectId));
  else if (v.projectIds === undefined) scope = undefined;
  else if (v.projectIds.length === 0) scope = isNull(connections.projectId);
  else scope = or(isNull(connections.projectId), inJsonList(connections.projectId, v.projectIds));
  return and(eq(connections.tenantId, tenantId), scope);
}

/** A connection the caller sees (see ConnectionVisibility); 404 otherwise. */
export async function getConnection(
  db: Db,
  tenantId: string,
  visibility: ConnectionVisibility,
  connectionId: number,
): Promise<ConnectionRow> {
  return connectionFound(await connectionQuery(db, tenantId, visibility, connectionId));
}

/** getConnection's query (at most one row), for a batch; connectionFound answers its rows. */
export function connectionQuery(db: Db, tenantId: string, visibility: ConnectionVisibility, connectionId: number) {
  return db
    .select()
    .from(connections)
    .where(and(visibleWhere(tenantId, visibility), eq(connections.id, connectionId)))
    .limit(1);
}

/** The connection connectionQuery read; 404 when none. */
export function connectionFound(rows: readonly ConnectionRow[]): ConnectionRow {
  if (!rows[0]) throw new NotFoundError("Connection");
  return rows[0];
}

/** One page of the connections the caller sees, in id order (`limit + 1` rows). */
export function listConnections(
  db: Db,
  tenantId: string,
  visibility: ConnectionVisibility,
  limit: number,
  after?: number,
) {
  return db.query.connections.findMany({
    where: and(visibleWhere(tenantId, visibility), after === undefined ? undefined : gt(connections.id, after)),
    orderBy: asc(connections.id),
    limit: limit + 1,
  });
}

const nameTaken = (name: string) => `A connection named '${name}' already exists here`;

/**
 * Names are unique within a scope: among a project's connections, or among the GLOBAL ones. The
 * unique indexes decide (see db/unique.ts); this only answers early, before any sealing: the
 * other connections named `name` in the scope of the connection `connectionId` (of the tenant),
 * for the batch that reads that connection.
 */
export function namesakesQuery(db: Db, tenantId: string, connectionId: number, name: string) {
  const scope = db
    .select({ projectId: connections.projectId })
    .from(connections)
    .where(and(eq(connections.tenantId, tenantId), eq(connections.id, connectionId)));
  return db
    .select({ id: connections.id })
    .from(connections)
    .where(
      and(
        eq(connections.tenantId, tenantId),
        sql`${connections.projectId} is (${scope})`,
        eq(connections.name, name),
        ne(connections.id, connectionId),
      ),
    )
    .limit(1);
}

/**
 * A GCP credential signs a JWT with its private key and sends it to `token_uri`: deployed, only
 * Google's token endpoint may receive it.
 */
function assertCredentialTargets(credential: ConnectionCredential, policy: OutboundPolicy) {
  if (credential.type !== "GCP" || policy.allowPrivateTargets) return;
  const uri = credential.payload.token_uri;
  if (uri !== undefined && uri !== GOOGLE_TOKEN_URI) {
    throw invalid([{ field: "credential.payload.token_uri", message: `must be ${GOOGLE_TOKEN_URI}` }]);
  }
}

const invalid = (errors: FieldProblem[]) => new InvalidInputError(errors);

const NO_CREDENTIAL_TAKEN = "an UPLOAD connection takes no credential: its data arrives by upload, it reaches no store";

/**
 * The credential a connection of this type stores: the one given, or nothing for UPLOAD (which
 * refuses one, so nobody believes a secret of theirs is in use). Any other type needs one.
 */
function credentialFor(type: ConnectionType, given: CredentialInput | undefined): ConnectionCredential {
  if (type === "UPLOAD") {
    if (given) throw invalid([{ field: "credential", message: NO_CREDENTIAL_TAKEN }]);
    return NO_CREDENTIAL;
  }
  if (!given) throw invalid([{ field: "credential", message: `is required for a ${type} connection` }]);
  return given;
}

/**
 * The INSERT that creates a connection (projectId null = GLOBAL) with its credential sealed, where
 * `allowed` holds (the caller's access, checked in the same batch), returning the row: nothing is
 * ever written half-done. The credential is sealed for a new seal id (credentialAad in
 * src/connections), so the row's id is chosen in the INSERT itself, as max + 1 as before. Bad input
 * is thrown before any statement is built. `claim` maps the batch's failure on a name's unique index
 * (a name taken, or taken meanwhile) to the 409.
 */
export async function createConnectionStatement(
  db: Db,
  box: SecretBox,
  tenantId: string,
  projectId: number | null,
  input: ConnectionDefinition,
  createdBy: string,
  policy: OutboundPolicy,
  allowed: SQL | undefined,
) {
  const credential = credentialFor(input.type, input.credential);
  const payload = input.payload ?? {};
  assertCredentialTargets(credential, policy);
  const now = nowIso();
  const insert = insertWhere(
    db,
    connections,
    {
      tenantId,
      projectId,
      name: input.name,
      type: input.type,
      payload,
      dbType: deriveDbType(input.type, payload),
      ...(await sealedCredential(box, tenantId, credential)),
      createdBy,
      createdAt: now,
      updatedAt: now,
    },
    allowed,
  ).returning();
  const claim = (batch: Promise<unknown[]>) => claimUnique(batch, nameTaken(input.name));
  return { insert, claim };
}

/** The columns of a credential sealed for a new seal id (credentialAad in src/connections). */
async function sealedCredential(box: SecretBox, tenantId: string, credential: ConnectionCredential) {
  const sealId = newSealId();
  return {
    credentialType: credential.type,
    credentialSecret: await sealCredential(box, tenantId, sealId, credential),
    sealId,
  };
}

/** The connection createConnectionStatement inserted, once its batch has shown the caller's access. */
export function connectionCreated(inserted: readonly ConnectionRow[]): ConnectionRow {
  // The access check passed on the state the INSERT saw, so it wrote: no row is a check out of step.
  if (!inserted[0]) throw new Error("createConnectionStatement: the access check passed, yet nothing was inserted");
  return inserted[0];
}

/** What a change of a connection comes to, checked against the stored row (connectionChange). */
interface CheckedChange {
  type: ConnectionType;
  payload: Record<string, unknown>;
  /** The new credential to seal; undefined keeps the stored one. */
  credential: ConnectionCredential | undefined;
  dbType: string | null;
}

/** The stored columns a change is checked against. */
type StoredConnection = Pick<ConnectionRow, "type" | "payload" | "credentialType">;

/**
 * Checks a partial update against the stored connection `row`: the resulting connection is
 * checked as a whole: a payload against the (new) type, the credential type against type and
 * payload; a type change needs a new payload and credential; a stored credential only goes where
 * it was entered for. Throws the 400 of the first failing check (every field problem of one kind
 * at once); answers what is to be written.
 */
function connectionChange(row: StoredConnection, changes: ConnectionChanges, policy: OutboundPolicy): CheckedChange {
  if (changes.credential) assertCredentialTargets(changes.credential, policy);
  const type = changes.type ?? row.type;
  const errors: FieldProblem[] = [];
  if (type === "UPLOAD" && changes.credential) errors.push({ field: "credential", message: NO_CREDENTIAL_TAKEN });
  if (type !== row.type && type !== "UPLOAD") {
    if (changes.payload === undefined) {
      errors.push({ field: "payload", message: `is required when the type changes to ${type}` });
    }
    if (changes.credential === undefined) {
      errors.push({ field: "credential", message: `is required when the type changes to ${type}` });
    }
  }
  // An UPLOAD connection's payload is empty, so a type change to it needs none.
  let payload = type !== row.type && type === "UPLOAD" ? {} : row.payload;
  if (changes.payload !== undefined) {
    const parsed = CONNECTION_PAYLOADS[type].safeParse(changes.payload);
    if (parsed.success) payload = parsed.data;
    else {
      for (const issue of parsed.error.issues) {
        errors.push({ field: ["payload", ...issue.path.map(String)].join("."), message: issue.message });
      }
    }
  }
  if (errors.length > 0) throw invalid(errors);
  // The new credential to seal: the one sent, or for UPLOAD none, replacing its former type's.
  const credential: ConnectionCredential | undefined =
    type === "UPLOAD" ? (row.credentialType === "NONE" ? undefined : NO_CREDENTIAL) : changes.credential;

  const need = requiredCredentialType(type, payload);
  const credentialType = credential?.type ?? row.credentialType;
  if (credentialType !== need) {
    const field = credential ? "credential.type" : "credential";
    throw invalid([{ field, message: `must be a ${need} credential for this ${type} connection` }]);
  }
  if (credential === undefined) {
    // The stored credential may only go where it was entered for (changedAddressFields in src/connections).
    const moved = changedAddressFields(type, row.payload, payload);
    if (moved.length > 0) {
      const fields = moved.map((f) => `payload.${f}`).join(", ");
      throw invalid([
        {
          field: "credential",
          message: `is required when ${fields} changes: the stored credential is only sent to the address it was entered for`,
        },
      ]);
    }
  }
  return { type, payload, credential, dbType: deriveDbType(type, payload) };
}

/** The connection's assets (a change of its type or db_type is refused while there are any). */
function usedByQuery(db: Db, tenantId: string, connectionId: number) {
  return db
    .select({ id: assets.id })
    .from(assets)
    .where(and(eq(assets.tenantId, tenantId), eq(assets.connectionId, connectionId)));
}

/** The 409 of a change of type or db_type refused while the assets `users` use the connection. */
function usedByConflict(typeChanged: boolean, users: readonly { id: number }[]): ConflictError {
  return new ConflictError(
    `The connection's ${typeChanged ? "type" : "db_type"} cannot change while assets use it: ` +
      `${users
        .slice(0, MAX_NAMED_ASSETS)
        .map((u) => u.id)
        .join(", ")}${users.length > MAX_NAMED_ASSETS ? ", …" : ""} ` +
      "(asset ids); move or delete them first, or create a new connection",
  );
}

/**
 * Applies a partial update to `row`, as read with `namesakes` (namesakesQuery of the name sent),
 * checked by connectionChange. A new credential is sealed again. Nothing is written when a check
 * fails; the UPDATE is one batch with `after` (the caller's statements that belong with it, e.g.
 * its audit row). Answers the row written.
 */
export async function updateConnection(
  db: Db,
  box: SecretBox,
  row: ConnectionRow,
  namesakes: readonly unknown[],
  changes: ConnectionChanges,
  policy: OutboundPolicy,
  after: readonly BatchItem<"sqlite">[] = [],
): Promise<ConnectionRow> {
  const { type, payload, credential, dbType } = connectionChange(row, changes, policy);
  if (changes.name !== undefined && namesakes.length > 0) throw new ConflictError(nameTaken(changes.name));
  // A new type or db_type would leave the connection's assets inconsistent (a DELTALAKE asset on a
  // SNOWFLAKE connection): such a change is made only while no asset uses the connection, checked
  // in the update itself so an asset created meanwhile cannot slip in.
  const reshapes = type !== row.type || dbType !== row.dbType;
  const usedBy = usedByQuery(db, row.tenantId, row.id);

  const [updated] = await claimUnique(
    writeWith(
      db,
      db
        .update(connections)
        .set({
          name: changes.name ?? row.name,
          type,
          payload,
          dbType,
          ...(credential ? await sealedCredential(box, row.tenantId, credential) : {}),
          updatedAt: nowIso(),
        })
        .where(
          and(
            eq(connections.tenantId, row.tenantId),
            eq(connections.id, row.id),
            reshapes ? notExists(usedBy) : undefined,
          ),
        )
        .returning(),
      after,
    ),
    nameTaken(changes.name ?? row.name),
  );
  if (!updated) {
    const users = reshapes ? await usedBy.limit(MAX_NAMED_ASSETS + 1) : [];
    if (users.length === 0) throw new NotFoundError("Connection");
    throw usedByConflict(type !== row.type, users);
  }
  return updated;
}

/**
 * Whether a change replaces a connection whole (type, payload and credential sent): its checks
 * then read nothing of the stored row but what SQL can test (the name's namesakes, the assets a
 * new type or db_type would strand), so replaceConnectionStatements writes it in one batch.
 */
export function replacesWhole(changes: ConnectionChanges): boolean {
  return changes.type !== undefined && changes.payload !== undefined && changes.credential !== undefined;
}

/** Another connection of the tenant, seen from the conditions of an update of one. */
const namesake = alias(connections, "namesake");

/**
 * The statements of a whole replacement (replacesWhole) of the connection `connectionId` the
 * caller sees (`visibility`), for the caller's batch after its access check: reads of the stored
 * connection, of its namesakes and of the assets using it (as the batch found them), then the
 * UPDATE, which writes only where `allowed` holds (the caller's access), where `global` holds for
 * a GLOBAL connection (the caller may change the tenant's connections), the change passes its
 * checks (connectionChange, which reads nothing stored here), no other connection of its scope has
 * the name sent and, for a new type or db_type, no asset uses it. Read the answer with
 * connectionReplaced.
 */
export async function replaceConnectionStatements(
  db: Db,
  box: SecretBox,
  tenantId: string,
  visibility: ConnectionVisibility,
  connectionId: number,
  changes: ConnectionChanges,
  policy: OutboundPolicy,
  allowed: SQL | undefined,
  global: SQL | undefined,
) {
  let change: CheckedChange | undefined;
  try {
    // A whole replacement's checks read no stored column (connectionChange): this stand-in row
    // answers them as the stored one does; connectionReplaced checks it again on the row read.
    change = connectionChange(
      { type: changes.type!, payload: {}, credentialType: changes.credential?.type ?? "NONE" },
      changes,
      policy,
    );
  } catch {
    change = undefined;
  }
  const usedBy = usedByQuery(db, tenantId, connectionId);
  const named = changes.name;
  const write = db
    .update(connections)
    .set({
      ...(change
        ? {
            ...(named !== undefined ? { name: named } : {}),
            type: change.type,
            payload: change.payload,
            dbType: change.dbType,
            ...(change.credential ? await sealedCredential(box, tenantId, change.credential) : {}),
          }
        : {}),
      updatedAt: nowIso(),
    })
    .where(
      and(
        visibleWhere(tenantId, visibility),
        eq(connections.id, connectionId),
        allowed,
        global === undefined ? undefined : or(isNotNull(connections.projectId), global),
        named === undefined
          ? undefined
          : notExists(
              db
                .select({ one: sql`1` })
                .from(namesake)
                .where(
                  and(
                    eq(namesake.tenantId, tenantId),
                    sql`${namesake.projectId} is ${connections.projectId}`,
                    eq(namesake.name, named),
                    ne(namesake.id, connectionId),
                  ),
                ),
            ),
        change
          ? or(
              and(eq(connections.type, change.type), sql`${connections.dbType} is ${change.dbType}`),
              notExists(usedBy),
            )
          : sql`0`,
      ),
    )
    .returning();
  return {
    connection: connectionQuery(db, tenantId, visibility, connectionId),
    namesakes: namesakesQuery(db, tenantId, connectionId, named ?? ""),
    usedBy: usedBy.limit(MAX_NAMED_ASSETS + 1),
    write,
    claim: (batch: Promise<unknown[]>) => claimUnique(batch, nameTaken(named ?? "")),
  };
}

/**
 * The answer of replaceConnectionStatements' batch, once it has shown the caller's access and
 * that the connection is one it may change (`row`, as the batch read it): the change's 400, the
 * name's 409 and a new type's or db_type's 409 in that order, as updateConnection answers them;
 * else the row written.
 */
export function connectionReplaced(
  row: ConnectionRow,
  changes: ConnectionChanges,
  policy: OutboundPolicy,
  namesakes: readonly unknown[],
  users: readonly { id: number }[],
  written: readonly ConnectionRow[],
): ConnectionRow {
  const { type, dbType } = connectionChange(row, changes, policy);
  if (changes.name !== undefined && namesakes.length > 0) throw new ConflictError(nameTaken(changes.name));
  if (written[0]) return written[0];
  const reshapes = type !== row.type || dbType !== row.dbType;
  if (reshapes && users.length > 0) throw usedByConflict(type !== row.type, users);
  // Every condition of the UPDATE held on the state the batch read: no row is a check out of step.
  throw new Error("replaceConnectionStatements: the checks passed, yet nothing was written");
}

/** Asset ids a refused connection change names at most. */
const MAX_NAMED_ASSETS = 20;
