/**
 * The peer of bench/incidents' live path: what a scan of an upload costs with nothing of ours in
 * it. `POST /assets/{n}/batch_data` with `{ csv }` stores the text in R2, records a QUEUED job in
 * D1 and sends a queue message; the consumer marks the job RUNNING, reads the object back (its
 * text, its lines counted) and marks it SUCCEEDED; `GET /jobs/{id}` answers the job; `GET /health`
 * (which the bench waits for before it starts) creates the jobs table. Ours does the
 * same plumbing (with authentication, the rate limiter and an inflated upload) and in between
 * profiles the batch and has the asset's AssetMonitor judge it and write its alerts and incidents.
 */
interface Env {
  DB: D1Database;
  UPLOADS: R2Bucket;
  JOBS: Queue<{ id: string; key: string }>;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS jobs (id TEXT PRIMARY KEY, asset INTEGER NOT NULL, status TEXT NOT NULL,
  created_at TEXT NOT NULL, started_at TEXT, finished_at TEXT, rows INTEGER)`;

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/health") {
      await env.DB.prepare(SCHEMA).run();
      return new Response("ok\n");
    }
    const upload = /^\/assets\/(\d+)\/batch_data$/.exec(url.pathname);
    if (upload && request.method === "POST") {
      const { csv } = await request.json<{ csv: string }>();
      const id = crypto.randomUUID();
      const key = `${upload[1]}/${id}.csv`;
      await env.UPLOADS.put(key, csv);
      await env.DB.prepare("INSERT INTO jobs (id, asset, status, created_at) VALUES (?, ?, 'QUEUED', ?)")
        .bind(id, Number(upload[1]), new Date().toISOString())
        .run();
      await env.JOBS.send({ id, key });
      return Response.json({ job_id: id }, { status: 202 });
    }
    const job = /^\/jobs\/([\w-]+)$/.exec(url.pathname);
    if (job) {
      const row = await env.DB.prepare("SELECT * FROM jobs WHERE id = ?").bind(job[1]).first();
      return row ? Response.json(row) : new Response("not found\n", { status: 404 });
    }
    return new Response("not found\n", { status: 404 });
  },

  async queue(batch: MessageBatch<{ id: string; key: string }>, env: Env): Promise<void> {
    await Promise.all(
      batch.messages.map(async (message) => {
        const { id, key } = message.body;
        await env.DB.prepare("UPDATE jobs SET status = 'RUNNING', started_at = ? WHERE id = ?")
          .bind(new Date().toISOString(), id)
          .run();
        const text = (await (await env.UPLOADS.get(key))?.text()) ?? "";
        let rows = 0;
        for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) rows++;
        await env.DB.prepare("UPDATE jobs SET status = 'SUCCEEDED', finished_at = ?, rows = ? WHERE id = ?")
          .bind(new Date().toISOString(), rows, id)
          .run();
        message.ack();
      }),
    );
  },
} satisfies ExportedHandler<Env, { id: string; key: string }>;
