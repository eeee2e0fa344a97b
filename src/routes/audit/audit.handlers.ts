import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { listAuditEvents as listEvents } from "../../audit/audit-log";
import { afterKey, takePage } from "../pagination";
import { pathsFiltered } from "./audit.middleware";
import type * as routes from "./audit.routes";
import { auditEventView } from "./audit.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const listAuditEvents: Handler<"listAuditEvents"> = async (c) => {
  const { tenant } = c.req.valid("param");
  await c.var.access.tenant(tenant, "TENANT_ADMIN");
  const { limit, cursor, actor, method, outcome, from_time, to_time, path } = c.req.valid("query");
  const rows = await listEvents(
    c.var.db,
    tenant,
    {
      actor,
      method,
      outcome,
      from: from_time,
      to: to_time,
      ...(path === undefined ? {} : { paths: pathsFiltered(path) }),
    },
    limit,
    afterKey(cursor, "number"),
  );
  return c.json(takePage(c, rows, limit, (r) => [r.id]).map(auditEventView), 200);
};
