import type { RouteHandler } from "@hono/zod-openapi";
import type { AppEnv } from "../../app-env";
import { secretBox } from "../../lib/crypto";
import { NotFoundError } from "../../lib/errors";
import * as tenants from "../../tenancy/tenants";
import { afterKey, listed } from "../pagination";
import { ApiError } from "../problems";
import type * as routes from "./tenants.routes";
import { tenantView } from "./tenants.views";

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const listTenants: Handler<"listTenants"> = async (c) => {
  c.var.access.platformAdmin();
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => tenants.listTenants(c.var.db, limit, afterKey(cursor, "string")),
    (r) => [r.id],
  );
  return c.json(rows.map(tenantView), 200);
};

export const getTenant: Handler<"getTenant"> = async (c) => {
  c.var.access.platformAdmin();
  const row = await tenants.getTenant(c.var.db, c.req.valid("param").tenantId);
  if (!row) throw new NotFoundError("Tenant");
  return c.json(tenantView(row), 200);
};

export const putTenant: Handler<"putTenant"> = async (c) => {
  c.var.access.platformAdmin();
  const { tenantId } = c.req.valid("param");
  const input = c.req.valid("json");
  if (input.id !== undefined && input.id !== tenantId) {
    throw ApiError.badRequest("The body's id differs from the path's tenantId", [
      { path: "body.id", message: "must equal the path's tenantId" },
    ]);
  }
  const { row, created } = await tenants.putTenant(c.var.db, secretBox(c.env.ENCRYPTION_KEYS), tenantId, input);
  const view = tenantView(row);
  return created ? c.json(view, 201) : c.json(view, 200);
};
