import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { acceptScanCallback } from "../../pipeline/spark-callback";
import type * as routes from "./scan-callbacks.routes";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const postScanCallback: Handler<"postScanCallback"> = async (c) => {
  const { job_id } = c.req.valid("param");
  await acceptScanCallback(
    c.env,
    // The request's own database (shard 0); the job is looked for on every shard beside it.
    c.var.db,
    job_id,
    { timestamp: c.req.header("x-dq-timestamp"), signature: c.req.header("x-dq-signature") },
    await c.req.text(),
  );
  return c.json({ message: `Result of ${job_id} accepted` }, 202);
};
