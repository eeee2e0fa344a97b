/**
 * The peers bench/api measures beside ours, both in one Worker run by the same wrangler dev:
 * - `/`: hello-world, no routing, no bindings used;
 * - `/floor`: the least an authenticated read of ours can do, with nothing of ours: one call to
 *   the rate limiter (the same binding type and budget as ours) and then one D1 query, in sequence;
 * - `/hono/<tenant>/floor`: the bare read inside a Hono app as ours is built (the router, a request
 *   id, a middleware around the handler that sets a header on its response, a path parameter and
 *   `c.json`): what the framework alone adds to the bare read;
 * - `/same/<name>`: as `/floor`, with one of our reads' own D1 call (its SQL and values, its
 *   method) on a copy of the service's seeded database: what that read would cost if it did nothing
 *   but the limiter and its query. bench/api registers each call first (POST `/same/<name>`).
 */
import { Hono, type MiddlewareHandler } from "hono";
import { requestId } from "hono/request-id";

export interface Env {
  DB: D1Database;
  APP_DB: D1Database;
  RATE_LIMIT: RateLimit;
}

/** One D1 call of a read of ours: a statement run with `method`, or a batch of statements. */
interface Call {
  method: "all" | "raw" | "batch";
  statements: { sql: string; params: unknown[] }[];
}

let next = 0;
const calls = new Map<string, Call>();

/**
 * The bare read in Hono: our app's shape without our middleware, validation or queries, at
 * `<prefix>/:tenant/floor`. `layer` wraps the handler (what bench/api/hello/compat.ts adds a step at
 * a time) and `d1` is the database the handler queries (the binding unless a layer gives another).
 */
export function honoFloor(
  prefix: string,
  layer?: MiddlewareHandler<{ Bindings: Env }>,
  d1: (env: Env) => Pick<D1Database, "prepare"> = (env) => env.DB,
  /** Middleware after `layer` that calls the rate limiter itself (our authentication): the handler does not. */
  limiting: MiddlewareHandler<{ Bindings: Env }>[] = [],
) {
  const app = new Hono<{ Bindings: Env }>();
  app.use("*", requestId());
  app.use("*", async (c, next) => {
    await next();
    c.res.headers.append("Server-Timing", 'd1;dur=0;desc="1 round trips, 1 sequential"');
  });
  if (layer) app.use("*", layer);
  for (const m of limiting) app.use(`${prefix}/:tenant/floor`, m);
  app.get(`${prefix}/:tenant/floor`, async (c) => {
    next = (next + 1) % 60;
    if (limiting.length === 0) {
      const { success } = await c.env.RATE_LIMIT.limit({ key: `standard:user:${next}` });
      if (!success) return c.text("limited\n", 429);
    }
    const { results } = await d1(c.env).prepare("SELECT ?1 AS n, ?2 AS tenant").bind(next, c.req.param("tenant")).all();
    return c.json(results);
  });
  return app;
}

const hono = honoFloor("/hono");

async function same(request: Request, env: Env, name: string): Promise<Response> {
  if (request.method === "POST") {
    calls.set(name, (await request.json()) as Call);
    return new Response(null, { status: 204 });
  }
  const call = calls.get(name);
  if (!call) return new Response("no such call\n", { status: 404 });
  next = (next + 1) % 60;
  const { success } = await env.RATE_LIMIT.limit({ key: `standard:user:${next}` });
  if (!success) return new Response("limited\n", { status: 429 });
  const statements = call.statements.map((s) => env.APP_DB.prepare(s.sql).bind(...s.params));
  if (call.method === "batch") return Response.json(await env.APP_DB.batch(statements));
  const [statement] = statements;
  return Response.json(call.method === "raw" ? await statement!.raw() : (await statement!.all()).results);
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path.startsWith("/same/")) return same(request, env, path.slice("/same/".length));
    if (path.startsWith("/hono/")) return hono.fetch(request, env);
    if (path !== "/floor" && path !== "/limiter" && path !== "/d1") {
      return new Response("hello\n", { headers: { "content-type": "text/plain" } });
    }
    // 60 keys in turn, as bench/api spreads its reads over 60 users' budgets.
    next = (next + 1) % 60;
    if (path !== "/d1") {
      const { success } = await env.RATE_LIMIT.limit({ key: `standard:user:${next}` });
      if (!success) return new Response("limited\n", { status: 429 });
      if (path === "/limiter") return Response.json([{ n: next }]);
    }
    const { results } = await env.DB.prepare("SELECT ?1 AS n").bind(next).all();
    return Response.json(results);
  },
} satisfies ExportedHandler<Env>;
