/**
 * The peers bench/api measures beside ours, both in one Worker run by the same wrangler dev:
 * - `/`: hello-world, no routing, no bindings used;
 * - `/floor`: the least an authenticated read of ours can do, with nothing of ours: one call to
 *   the rate limiter (the same binding type and budget as ours) and then one D1 query, in sequence.
 */
interface Env {
  DB: D1Database;
  RATE_LIMIT: RateLimit;
}

let next = 0;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const path = new URL(request.url).pathname;
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
