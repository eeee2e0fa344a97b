/**
 * The bare read in Hono (bench/api/hello/index.ts) in a Worker with `nodejs_compat`, as ours runs,
 * and then with what our app's middleware adds around every request's D1, one layer at a time
 * (each step has the previous ones):
 * - `/hono/<tenant>/floor`: the flag only;
 * - `/als/…`: one AsyncLocalStorage run per request, the handler's D1 read from it;
 * - `/session/…`: that D1 a D1 session (src/db/sessions.ts, as a read opens it), its bookmark
 *   sent back in a header;
 * - `/metered/…`: the session behind our D1 meter (src/db/metered.ts) and its Server-Timing;
 * - `/ours/…`: the handler's statement through our request-scoped binding (src/db/request-d1.ts),
 *   which is the app's middleware around D1 as src/app.ts runs it;
 * - `/authn/…`: our authentication (src/routes/authenticate.ts: the bearer token, its user, the
 *   rate limiter, which the handler then does not call itself);
 * - `/health` and `/api/…`: our whole app (src/app.ts) mounted in this Worker, on the copy of the
 *   service's database: what our app costs without our Worker's configuration (its static assets,
 *   its other bindings);
 * - `/api/ladder/<tenant>/…`: the bare read (`SELECT ?1`, on the request's D1) as a route of that
 *   app, inside its middleware and its `onError`, with a route's own layers added a step at a time:
 *   `authn` (authenticate), `access` (+ the access check of a tenant read, authorize), `input`
 *   (+ checkInput), `validators` (the route as authedRoute declares it: + the zod-openapi validators
 *   of its path and page query). The app's real reads (`/api/backend/…`) then add their handler,
 *   query, row mapping and view.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { z } from "@hono/zod-openapi";
import type { Context, MiddlewareHandler } from "hono";
import { createApp } from "../../../src/app";
import type { AppEnv as AppVariables } from "../../../src/app-env";
import { createDb } from "../../../src/db";
import { meteredD1, newD1Meter, serverTiming } from "../../../src/db/metered";
import { requestScopedD1, withRequestD1 } from "../../../src/db/request-d1";
import { BOOKMARK_HEADER, RequestSessions, sessionAsDatabase } from "../../../src/db/sessions";
import type { Env as AppEnv } from "../../../src/env";
import { authorize, inTenant } from "../../../src/routes/access";
import { authenticate } from "../../../src/routes/authenticate";
import { authedRoute, checkInput, jsonResponse } from "../../../src/routes/openapi";
import { PageQuery } from "../../../src/routes/pagination";
import { TenantParams } from "../../../src/routes/params";
import peers, { type Env, honoFloor } from "./index";

type Layer = MiddlewareHandler<{ Bindings: Env }>;

const store = new AsyncLocalStorage<D1Database>();
const stored = () => store.getStore()!;

/** The D1 a step's middleware runs the rest of the request with. */
function around(d1: (env: Env, method: string) => { db: D1Database; after?: () => [string, string][] }): Layer {
  return async (c, next) => {
    const { db, after } = d1(c.env, c.req.method);
    await store.run(db, next);
    for (const [name, value] of after?.() ?? []) c.res.headers.append(name, value);
  };
}

const session = (env: Env, method: string) => new RequestSessions(env.DB, method, undefined);
const bookmark = (sessions: RequestSessions): [string, string][] => {
  const seen = sessions.bookmark();
  return seen ? [[BOOKMARK_HEADER, seen]] : [];
};

/** Our app's middleware around D1 (src/app.ts), with the request's db and bookmarks set. */
const ours: Layer = async (c, next) => {
  const sessions = session(c.env, c.req.method);
  const meter = newD1Meter();
  const vars = c as unknown as { set(name: string, value: unknown): void };
  vars.set("db", db);
  vars.set("bookmarks", { sent: undefined, seen: () => sessions.bookmark() });
  await withRequestD1(meteredD1(sessionAsDatabase(sessions.main), meter), next);
  for (const [name, value] of [["Server-Timing", serverTiming(meter)], ...bookmark(sessions)]) {
    c.res.headers.append(name!, value!);
  }
};
const db = createDb(requestScopedD1);

const steps = new Map([
  ["/hono/", honoFloor("/hono")],
  [
    "/als/",
    honoFloor(
      "/als",
      around((env) => ({ db: env.DB })),
      stored,
    ),
  ],
  [
    "/session/",
    honoFloor(
      "/session",
      around((env, method) => {
        const sessions = session(env, method);
        return { db: sessionAsDatabase(sessions.main), after: () => bookmark(sessions) };
      }),
      stored,
    ),
  ],
  [
    "/metered/",
    honoFloor(
      "/metered",
      around((env, method) => {
        const sessions = session(env, method);
        const meter = newD1Meter();
        return {
          db: meteredD1(sessionAsDatabase(sessions.main), meter),
          after: () => [["Server-Timing", serverTiming(meter)], ...bookmark(sessions)],
        };
      }),
      stored,
    ),
  ],
  ["/ours/", honoFloor("/ours", ours, () => requestScopedD1)],
  // Our authentication (the bearer token, its user; the limiter is its call), on the request's db.
  ["/authn/", honoFloor("/authn", ours, () => requestScopedD1, [authenticate as unknown as Layer])],
]);

const app = createApp();

/** The bare read as a handler of our app: `SELECT ?1` on the request's D1 (the limiter is authenticate's). */
async function bareRead(c: Context<AppVariables>) {
  next = (next + 1) % 60;
  const { results } = await requestScopedD1
    .prepare("SELECT ?1 AS n, ?2 AS tenant")
    .bind(next, c.req.param("tenant") ?? "")
    .all<{ n: number; tenant: string }>();
  return c.json(results, 200);
}
let next = 0;
const access = authorize(inTenant("TENANT_MEMBER"));
app.get("/api/ladder/:tenant/authn", authenticate, bareRead);
app.get("/api/ladder/:tenant/access", authenticate, access, bareRead);
app.get("/api/ladder/:tenant/input", authenticate, access, checkInput, bareRead);
app.openapi(
  authedRoute({
    operationId: "benchLadder",
    access: inTenant("TENANT_MEMBER"),
    method: "get",
    path: "/api/ladder/{tenant}/validators",
    request: { params: TenantParams, query: PageQuery },
    responses: { 200: jsonResponse(z.array(z.object({ n: z.number(), tenant: z.string() })), "The bare read") },
  }),
  (c) => bareRead(c as unknown as Context<AppVariables>),
);

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path === "/health" || path.startsWith("/api/")) {
      return app.fetch(request, { ...env, DB: env.APP_DB } as unknown as AppEnv, ctx);
    }
    for (const [prefix, app] of steps) if (path.startsWith(prefix)) return app.fetch(request, env);
    return peers.fetch(request, env);
  },
} satisfies ExportedHandler<Env>;
