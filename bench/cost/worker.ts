/**
 * The Worker as deployed (src/index.ts), with what Cloudflare bills counted around it, for
 * bench/cost: D1 rows read and written (D1's own meta of every call), Durable Object requests and
 * SQLite rows, queue messages, R2 operations, and Worker invocations. Counters live in the isolate
 * (wrangler dev runs the Worker and its Durable Objects in one) and are read at GET /__cost.
 *
 * D1 gives its meta only with `all()`, `run()` and `batch()`: a read made with `raw()` or
 * `first()` is run again with `all()` for its meta (a read twice costs nothing but time), and a
 * write made with them runs once through `batch()`, its meta kept and its rows handed back.
 */
import worker, { AssetMonitor as Monitor } from "../../src/index";

const cost = {
  workerInvocations: { fetch: 0, queue: 0, scheduled: 0 },
  d1: { calls: 0, rowsRead: 0, rowsWritten: 0 },
  durableObject: { requests: 0, rowsRead: 0, rowsWritten: 0 },
  queueMessagesSent: 0,
  queueMessagesDelivered: 0,
  r2: { classA: 0, classB: 0 },
};

type Meta = { rows_read?: number; rows_written?: number };
const count = (meta: Meta | undefined) => {
  cost.d1.calls++;
  cost.d1.rowsRead += meta?.rows_read ?? 0;
  cost.d1.rowsWritten += meta?.rows_written ?? 0;
};

const READ = /^\s*(select|with|pragma)\b/i;
const ORIGINAL = Symbol("statement");

function meteredStatement(db: D1Database, statement: D1PreparedStatement, sql: string): D1PreparedStatement {
  return new Proxy(statement, {
    get(target, prop) {
      if (prop === ORIGINAL) return target;
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "bind") return (...args: unknown[]) => meteredStatement(db, value.apply(target, args), sql);
      if (prop === "all" || prop === "run") {
        return async () => {
          const result = (await value.apply(target)) as D1Result;
          count(result.meta as Meta);
          return result;
        };
      }
      if (prop === "raw" || prop === "first") {
        return async (...args: unknown[]) => {
          if (READ.test(sql)) {
            const answer = await value.apply(target, args);
            count(((await target.all()) as D1Result).meta as Meta);
            return answer;
          }
          const [result] = (await db.batch([target])) as D1Result<Record<string, unknown>>[];
          count(result!.meta as Meta);
          const rows = result!.results;
          if (prop === "first") {
            const row = rows[0] ?? null;
            return typeof args[0] === "string" && row ? row[args[0]] : row;
          }
          const opts = args[0] as { columnNames?: boolean } | undefined;
          const columns = rows[0] ? Object.keys(rows[0]) : [];
          const arrays = rows.map((r) => columns.map((c) => r[c]));
          return opts?.columnNames ? [columns, ...arrays] : arrays;
        };
      }
      return value.bind(target);
    },
  });
}

function meteredD1(db: D1Database): D1Database {
  return new Proxy(db, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "prepare") return (sql: string) => meteredStatement(target, value.call(target, sql), sql);
      if (prop === "batch") {
        return async (statements: D1PreparedStatement[]) => {
          const inner = statements.map((s) => (s as unknown as Record<symbol, D1PreparedStatement>)[ORIGINAL] ?? s);
          const results = (await value.call(target, inner)) as D1Result[];
          for (const r of results) count(r.meta as Meta);
          return results;
        };
      }
      if (prop === "withSession") {
        return (...args: unknown[]) => {
          const session = value.apply(target, args) as D1DatabaseSession;
          return meteredD1(session as unknown as D1Database);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function meteredQueue<T>(queue: Queue<T>): Queue<T> {
  return new Proxy(queue, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "send") {
        return (...args: unknown[]) => {
          cost.queueMessagesSent += 1;
          return value.apply(target, args);
        };
      }
      if (prop === "sendBatch") {
        return (messages: unknown[], ...rest: unknown[]) => {
          cost.queueMessagesSent += messages.length;
          return value.call(target, messages, ...rest);
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

const CLASS_A = new Set(["put", "delete", "list", "createMultipartUpload", "resumeMultipartUpload"]);
function meteredBucket(bucket: R2Bucket): R2Bucket {
  return new Proxy(bucket, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (CLASS_A.has(String(prop))) cost.r2.classA++;
        else if (prop === "get" || prop === "head") cost.r2.classB++;
        return value.apply(target, args);
      };
    },
  });
}

/** Every call on a Durable Object stub is one billed request (an RPC session). */
function meteredNamespace(ns: DurableObjectNamespace): DurableObjectNamespace {
  return new Proxy(ns, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (prop === "get") {
        return (...args: unknown[]) => {
          const stub = value.apply(target, args);
          return new Proxy(stub, {
            get(s, p) {
              const member = Reflect.get(s, p, s);
              if (typeof member !== "function" || p === "then") return member;
              // An RPC stub's member is itself a stub: call it, never its (remote) `apply`.
              return (...a: unknown[]) => {
                cost.durableObject.requests++;
                return (member as (...x: unknown[]) => unknown)(...a);
              };
            },
          });
        };
      }
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

type AnyEnv = Record<string, unknown>;
const wrapped = new WeakMap<object, AnyEnv>();
function meteredEnv(env: AnyEnv): AnyEnv {
  const known = wrapped.get(env);
  if (known) return known;
  const out: AnyEnv = { ...env };
  out.DB = meteredD1(env.DB as D1Database);
  for (const q of ["SCAN_JOBS", "SCAN_RESULTS", "NOTIFICATIONS"]) out[q] = meteredQueue(env[q] as Queue<unknown>);
  out.UPLOADS = meteredBucket(env.UPLOADS as R2Bucket);
  out.ASSET_MONITOR = meteredNamespace(env.ASSET_MONITOR as DurableObjectNamespace);
  wrapped.set(env, out);
  return out;
}

/** The Durable Object with its env metered and its SQLite rows counted (the cursor's rowsRead/rowsWritten). */
export class AssetMonitor extends Monitor {
  constructor(ctx: DurableObjectState, env: AnyEnv) {
    const exec = ctx.storage.sql.exec.bind(ctx.storage.sql);
    const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
    (ctx.storage.sql as { exec: typeof exec }).exec = ((query: string, ...bindings: unknown[]) => {
      const cursor = exec(query, ...bindings);
      cursors.push(cursor);
      return cursor;
    }) as typeof exec;
    // Rows are counted as a cursor is read: settle them at the end of each turn.
    setInterval(() => {
      for (const c of cursors.splice(0)) {
        cost.durableObject.rowsRead += c.rowsRead;
        cost.durableObject.rowsWritten += c.rowsWritten;
      }
    }, 50);
    super(ctx, meteredEnv(env) as never);
  }
}

export default {
  async fetch(request: Request, env: AnyEnv, ctx: ExecutionContext) {
    if (new URL(request.url).pathname === "/__cost") return Response.json(cost);
    cost.workerInvocations.fetch++;
    return worker.fetch(request, meteredEnv(env) as never, ctx);
  },
  async queue(batch: MessageBatch<unknown>, env: AnyEnv) {
    cost.workerInvocations.queue++;
    cost.queueMessagesDelivered += batch.messages.length;
    return worker.queue(batch as MessageBatch<never>, meteredEnv(env) as never);
  },
  async scheduled(controller: ScheduledController, env: AnyEnv) {
    cost.workerInvocations.scheduled++;
    return worker.scheduled(controller, meteredEnv(env) as never);
  },
} satisfies ExportedHandler<AnyEnv>;
