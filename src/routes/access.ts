/**
 * Who may call a route, declared with the route (`authedRoute({ access: … })`) and checked before
 * anything of the request but its path is looked at: a caller without access to the tenant or
 * the resource the path names gets the same 404 (or 403) whatever body or query it sends, and
 * learns nothing of the route's input from a validation error (issue 42).
 *
 * The check runs in the route's middleware, after authentication and before the input checks and
 * the validators (src/routes/openapi.ts). A write waits for it before anything else runs. A read
 * (GET, HEAD) may read beside it, as the handlers' checks already did (readBesideCheck), but no
 * answer of a read leaves before it: an error answer is replaced by the check's refusal
 * (`onError` in src/app.ts awaits `verdict` first), a successful one too.
 *
 * The declaration is also published in the OpenAPI document (`x-access`: which resource, which
 * role), where the route-walking test (test/routes/access-first.test.ts) reads it.
 */

import { and, type SQL } from "drizzle-orm";
import type { BatchItem, BatchResponse } from "drizzle-orm/batch";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";
import type { Access } from "../auth/access";
import type { ProjectRole, TenantRole } from "../db/schema";
import { auditedInBatch, auditInBatch } from "./audit/audit.middleware";
import { IntId, TenantId } from "./params";

/** What a route needs of its caller. */
export type Grant =
  /** The platform administrator only (403 for anyone else). */
  | { of: "platform" }
  /** Any user, acting for themselves (403 for tenant-scoped keys and the administrator). */
  | { of: "user" }
  /** A role in the tenant of the path's `{tenant}`; `inBatch` as below (Access.tenantInBatch). */
  | { of: "tenant"; role: TenantRole; inBatch?: true }
  /**
   * A role in the project, asset or incident the path parameter `param` names (of `{tenant}`).
   * `inBatch` (writes): the handler checks it in its one batch with the write (see authorize).
   */
  | {
      of: "project" | "asset" | "incident";
      role: ProjectRole;
      param: string;
      read?: "head" | "connectionType";
      inBatch?: true;
    };

/** The platform administrator's routes. */
export const PLATFORM_ADMIN: Grant = { of: "platform" };
/** A user's own things (their API keys). */
export const ANY_USER: Grant = { of: "user" };
/** A role in the path's tenant. */
export const inTenant = (role: TenantRole): Grant => ({ of: "tenant", role });
/**
 * As inTenant, for a write whose handler checks the role in the write's own batch
 * (Access.tenantInBatch, then writeInBatch): the write is one round trip.
 */
export const inTenantInBatch = (role: TenantRole): Grant => ({ of: "tenant", role, inBatch: true });
/** A role in the path's project (`{projectId}`, or the parameter named). */
export const inProject = (role: ProjectRole, param = "projectId"): Grant => ({ of: "project", role, param });
/**
 * As inProject, for a route whose handler checks the role in its own round trip: a write's batch
 * (Access.projectInBatch, then settleInBatch), a read's query (Access.projectFrom, then settleCheck).
 */
export const inProjectInBatch = (role: ProjectRole, param = "projectId"): Grant => ({
  of: "project",
  role,
  param,
  inBatch: true,
});
/**
 * A role in the project of the path's asset (`{assetId}`, or the parameter named); `read` is how
 * much of the asset the handler reads with its own check (Access.assetHead, assetWithConnectionType),
 * so both share one query. `inBatch`: as inProjectInBatch, the handler checks it in its one batch
 * (Access.assetInBatch, then settleInBatch).
 */
export const onAsset = (
  role: ProjectRole,
  options: { param?: string; read?: "head" | "connectionType"; inBatch?: true } = {},
): Grant => ({
  of: "asset",
  role,
  param: options.param ?? "assetId",
  ...(options.read ? { read: options.read } : {}),
  ...(options.inBatch ? { inBatch: options.inBatch } : {}),
});
/** A role in the project of the path's incident (`{incidentId}`). */
export const onIncident = (role: ProjectRole): Grant => ({ of: "incident", role, param: "incidentId" });
/** As onIncident, for a write whose handler checks the role in its own batch (Access.incidentInBatch, then settleInBatch). */
export const onIncidentInBatch = (role: ProjectRole): Grant => ({
  of: "incident",
  role,
  param: "incidentId",
  inBatch: true,
});

/** Methods that only read: their handler may read beside the check (see above). */
const READS = new Set(["GET", "HEAD"]);

/** A path id as the routes' validators read it; built once (a zod schema's construction costs more than its check). */
const PATH_ID = IntId("id");

/** An id as the route's validator will read it; undefined when it is not one (the validator answers that). */
function idOf(raw: string | undefined): number | undefined {
  const parsed = PATH_ID.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The check of `grant` for a request with path parameters `params`. A tenant id that cannot be one
 * names no tenant: it is left to the validator (the same 400 for everyone). A resource id that is
 * not an id falls back to the tenant: the caller's standing there decides, and the validator then
 * names the bad parameter to a caller who may see the tenant.
 */
export async function checkGrant(access: Access, grant: Grant, params: Record<string, string>): Promise<void> {
  if (grant.of === "platform") return access.platformAdmin();
  if (grant.of === "user") return void access.user();
  const tenant = params.tenant ?? "";
  if (!TenantId.safeParse(tenant).success) return;
  if (grant.of === "tenant") return void (await access.tenant(tenant, grant.role));
  const id = idOf(params[grant.param]);
  if (id === undefined) return void (await access.tenant(tenant));
  if (grant.of === "project") await access.project(tenant, id, grant.role);
  else if (grant.of === "incident") await access.incident(tenant, id, grant.role);
  else if (grant.read === "head") await access.assetHead(tenant, id, grant.role);
  else if (grant.read === "connectionType") await access.assetWithConnectionType(tenant, id, grant.role);
  else await access.asset(tenant, id, grant.role);
}

/**
 * The route middleware that checks `grant` (after `authenticate`, before the input is read).
 *
 * A route whose grant is `inBatch` is checked by its handler, in the one round trip that reads or
 * writes (a write's WHERE holds the same condition, so a refused caller changes nothing; a read's
 * rows are answered only once the check has passed): the middleware only keeps the check, which
 * runs if an error answers before the handler has settled it (an invalid input, a failed batch):
 * that answer still waits for the check, and its refusal replaces it.
 */
export function authorize(grant: Grant): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if ("inBatch" in grant && grant.inBatch) {
      c.set("deferredCheck", () => checkGrant(c.get("access"), grant, c.req.param() as Record<string, string>));
      await next();
      // A handler that answers without having settled the check is a bug: nothing unchecked leaves.
      if (!c.error && !c.get("verdict"))
        throw new Error(`${c.req.method} ${c.req.path}: its inBatch check was not settled`);
      return;
    }
    const verdict = checkGrant(c.get("access"), grant, c.req.param() as Record<string, string>);
    // Settled below, or by onError: never an unhandled rejection meanwhile.
    verdict.catch(() => {});
    c.set("verdict", verdict);
    if (!READS.has(c.req.method)) await verdict;
    await next();
    // A read's answer leaves only once the check has passed (its refusal replaces the answer).
    await verdict;
  };
}

/** The refusal of the route's access check, once it is known; undefined when it passed or there is none. */
export async function accessRefusal(c: Context<AppEnv>): Promise<unknown> {
  const verdict = (c.get("verdict") as Promise<void> | undefined) ?? c.get("deferredCheck")?.();
  if (!verdict) return undefined;
  return verdict.then(
    () => undefined,
    (refusal: unknown) => refusal,
  );
}

/** The declaration as published in the OpenAPI document (`x-access`). */
export function documentedGrant(grant: Grant): Record<string, string> {
  switch (grant.of) {
    case "platform":
      return { of: "platform", role: "PLATFORM_ADMIN" };
    case "user":
      return { of: "user", role: "USER" };
    case "tenant":
      return { of: "tenant", role: grant.role };
    default:
      return { of: grant.of, role: grant.role, parameter: grant.param };
  }
}

/**
 * The answer of an `inBatch` access check (Access.projectInBatch's `settle` on the batch's rows),
 * kept as the request's verdict: a refusal is thrown, and answers as any route's refusal does.
 */
export function settleInBatch<T>(c: Context<AppEnv>, settle: () => T): T {
  try {
    const access = settle();
    c.set("verdict", Promise.resolve());
    return access;
  } catch (refusal) {
    const verdict = Promise.reject(refusal);
    verdict.catch(() => {});
    c.set("verdict", verdict);
    throw refusal;
  }
}

/** As settleInBatch, for a check answered asynchronously (Access.projectFrom): the request's verdict. */
export function settleCheck<T>(c: Context<AppEnv>, check: Promise<T>): Promise<T> {
  const verdict = check.then(() => undefined);
  verdict.catch(() => {});
  c.set("verdict", verdict);
  return check;
}

/** An `inBatch` access check (Access.tenantInBatch, projectInBatch, assetInBatch): its read, and its answer from the read's rows. */
export interface InBatchCheck<R extends BatchItem<"sqlite">, A> {
  read: R;
  settle: (rows: Awaited<R>) => A;
}

/**
 * A write in one round trip: the check's read, then `writes`, in one db.batch (a transaction),
 * through `claim` when given (a failed batch mapped to a domain error, e.g. claimUnique's 409); the
 * check is then settled from its read (settleInBatch: a refusal is the answer). `writes` must
 * hold the check's `allowed` in their conditions, so a refused caller's batch changes nothing.
 * Answers the access and each write's result.
 */
export async function writeInBatch<R extends BatchItem<"sqlite">, A, T extends readonly BatchItem<"sqlite">[]>(
  c: Context<AppEnv>,
  check: InBatchCheck<R, A>,
  writes: readonly [...T],
  claim: (batch: Promise<unknown[]>) => Promise<unknown[]> = (batch) => batch,
): Promise<[A, ...BatchResponse<T>]> {
  const [rows, ...results] = await claim(
    c.get("db").batch([check.read, ...writes] as unknown as [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]]),
  );
  const access = settleInBatch(c, () => check.settle(rows as Awaited<R>));
  return [access, ...(results as BatchResponse<T>)];
}

/**
 * writeInBatch with the write's audit row appended (as answering `audit.status`, if the last
 * statement changed a row or where `audit.when` holds: auditInBatch): a read among `statements`
 * is answered only once the check has passed; `claim` as writeInBatch's. Answers the caller's
 * access and what each statement returned.
 */
export async function writeChecked<
  R extends BatchItem<"sqlite">,
  A,
  S extends readonly [BatchItem<"sqlite">, ...BatchItem<"sqlite">[]],
>(
  c: Context<AppEnv>,
  check: InBatchCheck<R, A>,
  statements: S,
  audit: { status: number; when?: SQL | undefined },
  claim?: (batch: Promise<unknown[]>) => Promise<unknown[]>,
): Promise<{ access: A; results: { [K in keyof S]: Awaited<S[K]> } }> {
  const [access, ...results] = await writeInBatch(
    c,
    check,
    [...statements, auditInBatch(c, audit.status, audit.when)] as BatchItem<"sqlite">[],
    claim,
  );
  auditedInBatch(c, audit.status);
  return { access, results: results.slice(0, statements.length) as unknown as { [K in keyof S]: Awaited<S[K]> } };
}

/**
 * The in-batch checks of a move between two projects of the path's tenant (PROJECT_EDITOR in
 * both): `reads` go first in the move's batch, `allowed` into its writes' conditions, and `settle`
 * answers from the reads' rows, the route's grant (the target's) first, then the source's.
 */
export function moveInBatch(c: Context<AppEnv>, tenant: string, targetProjectId: number, sourceProjectId: number) {
  const target = c.var.access.projectInBatch(tenant, targetProjectId, "PROJECT_EDITOR");
  const source = c.var.access.projectInBatch(tenant, sourceProjectId, "PROJECT_EDITOR");
  return {
    reads: [target.read, source.read] as const,
    allowed: and(target.allowed, source.allowed),
    settle: (targetRows: Awaited<typeof target.read>, sourceRows: Awaited<typeof source.read>) => {
      settleInBatch(c, () => target.settle(targetRows));
      source.settle(sourceRows);
    },
  };
}
