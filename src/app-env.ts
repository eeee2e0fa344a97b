import type { AuditWrite } from "./audit/audit-log";
import type { Access, SessionBookmarks } from "./auth/access";
import type { Principal } from "./auth/principal";
import type { Db } from "./db";
import type { Env } from "./env";

/** Hono's environment: bindings and per-request variables. */
export type AppEnv = {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The request's database: its queries run in the request's D1 session (src/db/sessions.ts). */
    db: Db;
    /** A database whose first query reads the primary: to read a write a Durable Object just made. */
    dbFromPrimary: () => Db;
    /** The bookmark the client sent and the newest state the request has seen (src/db/sessions.ts). */
    bookmarks: SessionBookmarks;
    /** The tenant the path names and its shard (src/db/shards.ts); unset for the paths of no tenant. */
    home?: { tenantId: string; shard: number; placed: boolean };
    /** Set by the authenticate middleware on authenticated routes. */
    principal: Principal;
    access: Access;
    /** The route's access check (src/routes/access.ts): settled before any answer leaves. */
    verdict: Promise<void>;
    /**
     * A write whose access check its handler makes in its one batch (src/routes/access.ts,
     * `inBatch`): the check, run only if something needs its answer before the handler's.
     */
    deferredCheck: () => Promise<void>;
    /** The status a handler recorded its write with in its own batch (src/routes/audit/audit.middleware.ts). */
    auditedStatus: number;
    /** The write a handler's batch records if its conditions hold (auditInBatch), as it records it. */
    auditInBatch: AuditWrite;
  };
};
