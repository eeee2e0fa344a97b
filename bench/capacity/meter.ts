/**
 * bench/capacity, inside the Worker: every D1 binding of the Worker's env wrapped, so that each
 * statement the code issues — from a request, a queue consumer, the cron, or a Durable Object — is
 * counted where it enters the binding, whatever the code above it is (drizzle, prepared statements,
 * batches, src/db/metered.ts). The bench builds an entry module around the Worker's own bundle
 * (entry.ts writes it): the default export's handlers and each Durable Object class get the wrapped
 * env, also through `cloudflare:workers`' `env` (withEnv), and GET /__bench/d1 answers the counts.
 *
 * This file runs in workerd, next to the bundle; it is compiled on its own by esbuild (no imports).
 */

/** What one origin did with one binding. */
export interface D1Counts {
  /** Calls to the binding: a statement run alone, a batch, an exec (each one round trip). */
  calls: number;
  batches: number;
  statements: number;
  /** Statements that write (insert, update, delete, replace, upsert), by their SQL. */
  writes: number;
  /** From D1's own result meta, where the call returns it (`all`, `run`, `batch`; not `first`, `raw`). */
  rowsRead: number;
  rowsWritten: number;
  changes: number;
  /** Milliseconds of the statements' execution as D1 reports it (meta.duration; the local D1 times its SQLite). */
  durationMs: number;
  /** Statements whose result meta came back (the rows_*, changes and duration above cover these). */
  withMeta: number;
}

/** One statement as issued, for the bench to replay on a copy of the database (see replay.ts). */
export interface CapturedStatement {
  binding: string;
  origin: string;
  /** Statements of one batch share a number (they run in one transaction); a lone statement has its own. */
  call: number;
  sql: string;
  params: unknown[];
}

export interface MeterReport {
  /** "<binding> <origin>" → counts. */
  counts: Record<string, D1Counts>;
  /** The size of each database as D1 last reported it (meta.size_after), by binding. */
  sizeAfter: Record<string, number>;
  captured: CapturedStatement[];
}

const counts = new Map<string, D1Counts>();
const sizeAfter = new Map<string, number>();
let captured: CapturedStatement[] | undefined;
let nextCall = 0;

const WRITE = /^\s*(?:insert|update|delete|replace|upsert)\b/i;
/** A `with … ` statement writes when its body does (after the CTEs). */
const CTE_WRITE = /\)\s*(?:insert|update|delete|replace)\b/i;
/** Whether a statement writes, by its SQL. */
export const isWrite = (sql: string) => WRITE.test(sql) || (/^\s*with\b/i.test(sql) && CTE_WRITE.test(sql));

/** Counts at zero. */
export const zeroCounts = (): D1Counts => ({
  calls: 0,
  batches: 0,
  statements: 0,
  writes: 0,
  rowsRead: 0,
  rowsWritten: 0,
  changes: 0,
  durationMs: 0,
  withMeta: 0,
});

function countsOf(key: string): D1Counts {
  let c = counts.get(key);
  if (!c) {
    c = zeroCounts();
    counts.set(key, c);
  }
  return c;
}

interface Issued {
  sql: string;
  params: unknown[];
}

/** What the binding's statements carry for the meter: the SQL and its bound values. */
const ISSUED = Symbol("issued");
const ORIGINAL = Symbol("original");

function noteMeta(binding: string, c: D1Counts, result: unknown) {
  const meta = (result as { meta?: Partial<D1Meta> & { size_after?: number } } | null)?.meta;
  if (!meta) return;
  c.withMeta++;
  c.rowsRead += meta.rows_read ?? 0;
  c.rowsWritten += meta.rows_written ?? 0;
  c.changes += meta.changes ?? 0;
  c.durationMs += meta.duration ?? 0;
  if (typeof meta.size_after === "number") sizeAfter.set(binding, meta.size_after);
}

function issue(binding: string, origin: string, statements: Issued[]): number {
  const c = countsOf(`${binding} ${origin}`);
  const call = nextCall++;
  c.calls++;
  c.statements += statements.length;
  for (const s of statements) {
    if (isWrite(s.sql)) c.writes++;
    captured?.push({ binding, origin, call, sql: s.sql, params: s.params.map(storable) });
  }
  return call;
}

/** A bound value as JSON can carry it: bytes as `{ bytes: [...] }`, booleans as D1 stores them (1, 0). */
function storable(value: unknown): unknown {
  if (typeof value === "boolean") return value ? 1 : 0;
  if (value === undefined) return null;
  if (value instanceof ArrayBuffer) return { bytes: [...new Uint8Array(value)] };
  if (ArrayBuffer.isView(value))
    return { bytes: [...new Uint8Array(value.buffer, value.byteOffset, value.byteLength)] };
  return value;
}

const RUNS = new Set(["first", "all", "run", "raw"]);

function meteredStatement(
  inner: D1PreparedStatement,
  issued: Issued,
  binding: string,
  origin: string,
): D1PreparedStatement {
  return new Proxy(inner, {
    get(target, prop) {
      if (prop === ISSUED) return issued;
      if (prop === ORIGINAL) return target;
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "bind") {
        return (...params: unknown[]) =>
          meteredStatement(value.apply(target, params), { sql: issued.sql, params }, binding, origin);
      }
      if (typeof prop === "string" && RUNS.has(prop)) {
        return async (...args: unknown[]) => {
          issue(binding, origin, [issued]);
          const result = await value.apply(target, args);
          noteMeta(binding, countsOf(`${binding} ${origin}`), result);
          return result;
        };
      }
      return value.bind(target);
    },
  });
}

type Tagged = D1PreparedStatement & { [ISSUED]?: Issued; [ORIGINAL]?: D1PreparedStatement };

/** `d1` (the binding named `binding`), counting what `origin` issues through it. */
export function meteredDatabase<T extends D1Database>(d1: T, binding: string, origin: string): T {
  return new Proxy(d1, {
    get(target, prop) {
      const value = Reflect.get(target, prop, target);
      if (typeof value !== "function") return value;
      if (prop === "prepare") {
        return (sql: string) => meteredStatement(value.call(target, sql), { sql, params: [] }, binding, origin);
      }
      if (prop === "batch") {
        return async (statements: Tagged[]) => {
          // Another wrapper (src/db/metered.ts) may hand over its own proxies of ours: both answer ISSUED
          // and ORIGINAL through to our proxy, whose ORIGINAL is the binding's own statement.
          issue(
            binding,
            origin,
            statements.map((s) => s[ISSUED] ?? { sql: "?", params: [] }),
          );
          const c = countsOf(`${binding} ${origin}`);
          c.batches++;
          const results = (await value.call(
            target,
            statements.map((s) => s[ORIGINAL] ?? s),
          )) as unknown[];
          for (const r of results) noteMeta(binding, c, r);
          return results;
        };
      }
      if (prop === "exec") {
        return async (sql: string) => {
          // exec runs each line as a statement; its result says how many ran.
          const c = countsOf(`${binding} ${origin}`);
          const result = (await value.call(target, sql)) as D1ExecResult;
          const n = result?.count ?? 1;
          c.calls++;
          c.statements += n;
          if (isWrite(sql)) c.writes += n;
          captured?.push({ binding, origin, call: nextCall++, sql, params: [] });
          return result;
        };
      }
      if (prop === "withSession") {
        return (...args: unknown[]) => meteredDatabase(value.apply(target, args), binding, origin);
      }
      return value.bind(target);
    },
  });
}

const isD1 = (v: unknown): v is D1Database =>
  typeof v === "object" &&
  v !== null &&
  typeof (v as D1Database).prepare === "function" &&
  typeof (v as D1Database).batch === "function" &&
  typeof (v as D1Database).exec === "function";

/** `env` with each of its D1 bindings metered as `origin`. */
export function meteredEnv<E extends object>(env: E, origin: string): E {
  const out: Record<string, unknown> = { ...(env as Record<string, unknown>) };
  for (const [name, value] of Object.entries(env)) {
    if (isD1(value)) out[name] = meteredDatabase(value, name, origin);
  }
  return out as E;
}

/** A request's origin: its method and path, ids and numbers as `{n}`. */
export function requestOrigin(request: Request): string {
  const path = new URL(request.url).pathname
    .split("/")
    .map((part) => (/^\d+$/.test(part) || /^[0-9a-f-]{16,}$/i.test(part) ? "{n}" : part))
    .join("/");
  return `fetch ${request.method} ${path}`;
}

/**
 * Times `n` one-statement calls to the binding, one after the other, from the Worker: writes of a
 * row of ~200 bytes into a table of the probe's own (`setup` makes it, `drop` removes it), or reads
 * of one row by key. What a call to the local D1 costs, the hop from the Worker to it included;
 * answers the milliseconds per call.
 */
async function probe(d1: D1Database, step: string, n: number): Promise<number> {
  if (step === "setup") {
    await d1
      .prepare("create table if not exists bench_probe (id integer primary key, tenant_id text, at text, payload text)")
      .run();
    return 0;
  }
  if (step === "drop") {
    await d1.prepare("drop table if exists bench_probe").run();
    return 0;
  }
  const payload = "x".repeat(200);
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    if (step === "write") {
      await d1
        .prepare("insert into bench_probe (tenant_id, at, payload) values (?, ?, ?)")
        .bind("probe", new Date().toISOString(), payload)
        .run();
    } else {
      await d1
        .prepare("select id, tenant_id, at, payload from bench_probe where id = ?")
        .bind(1 + i)
        .first();
    }
  }
  return (performance.now() - start) / n;
}

/**
 * The bench's own routes: the counts so far (GET /__bench/d1; `?statements=1` with the statements
 * kept), a reset (POST /__bench/d1; `?capture=1` keeps the statements from then on), and the probe
 * of a call's cost (POST /__bench/d1/probe?step=setup|write|read|drop&n=…), through the unmetered
 * binding.
 */
export function meterRoute(request: Request, env: object): Response | Promise<Response> | undefined {
  const url = new URL(request.url);
  if (url.pathname === "/__bench/d1/probe" && request.method === "POST") {
    const d1 = Object.values(env).find(isD1);
    if (!d1) return new Response("no D1 binding", { status: 500 });
    const step = url.searchParams.get("step") ?? "";
    if (!["setup", "write", "read", "drop"].includes(step)) return new Response("bad step", { status: 400 });
    return probe(d1, step, Number(url.searchParams.get("n") ?? "1")).then((ms) => Response.json({ ms }));
  }
  if (url.pathname !== "/__bench/d1") return undefined;
  if (request.method === "POST") {
    counts.clear();
    captured = url.searchParams.get("capture") === "1" ? [] : undefined;
    return new Response(null, { status: 204 });
  }
  const report: MeterReport = {
    counts: Object.fromEntries(counts),
    sizeAfter: Object.fromEntries(sizeAfter),
    // The statements only when asked for (`?statements=1`): they may be megabytes.
    captured: url.searchParams.get("statements") === "1" ? (captured ?? []) : [],
  };
  return Response.json(report);
}

type WithEnv = <R>(env: unknown, fn: () => R) => R;

/** The Worker's default export (an object of handlers) with metered envs, the meter's route in front. */
export function meteredHandlers<E extends object>(handlers: ExportedHandler<E>, withEnv: WithEnv): ExportedHandler<E> {
  const out: ExportedHandler<E> = { ...handlers };
  out.fetch = (request, env, ctx) => {
    const answer = meterRoute(request as unknown as Request, env);
    if (answer) return answer;
    const metered = meteredEnv(env, requestOrigin(request as unknown as Request));
    return withEnv(metered, () => handlers.fetch!(request, metered, ctx));
  };
  if (handlers.queue) {
    out.queue = (batch, env, ctx) => {
      const metered = meteredEnv(env, `queue ${batch.queue}`);
      return withEnv(metered, () => handlers.queue!(batch, metered, ctx));
    };
  }
  if (handlers.scheduled) {
    out.scheduled = (controller, env, ctx) => {
      const metered = meteredEnv(env, "scheduled");
      return withEnv(metered, () => handlers.scheduled!(controller, metered, ctx));
    };
  }
  return out;
}

// biome-ignore lint/suspicious/noExplicitAny: any Durable Object class, whatever its constructor and methods (a mixin's type)
type ObjectClass = new (...args: any[]) => any;

/**
 * A subclass of a Durable Object class whose env is metered as `do <name>`, and whose methods
 * (RPC, fetch, alarm) run with that env as `cloudflare:workers`' `env` too.
 */
export function meteredObject<C extends ObjectClass>(Base: C, name: string, withEnv: WithEnv): C {
  const origin = `do ${name}`;
  const Metered = class extends Base {
    // biome-ignore lint/suspicious/noExplicitAny: as the base's
    constructor(...args: any[]) {
      const [ctx, env] = args as [DurableObjectState, object];
      super(ctx, meteredEnv(env, origin));
    }
  };
  const seen = new Set<string>(["constructor"]);
  for (let proto = Base.prototype; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (seen.has(key)) continue;
      seen.add(key);
      const method = Object.getOwnPropertyDescriptor(proto, key)?.value;
      if (typeof method !== "function") continue;
      Object.defineProperty(Metered.prototype, key, {
        configurable: true,
        writable: true,
        value(this: { env: unknown }, ...args: unknown[]) {
          return withEnv(this.env, () => method.apply(this, args));
        },
      });
    }
  }
  return Metered;
}
