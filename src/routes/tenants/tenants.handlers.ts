import type { RouteHandler } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { createDb, type Db } from "../../db";
import { shardDatabases } from "../../db/shards";
import { secretBox } from "../../lib/crypto";
import { NotFoundError } from "../../lib/errors";
import { placeTenant } from "../../tenancy/shards";
import * as tenants from "../../tenancy/tenants";
import { afterKey, listed } from "../pagination";
import { ApiError } from "../problems";
import type * as routes from "./tenants.routes";
import { tenantView } from "./tenants.views";

/** Every shard's database, the request's own for the shard it runs on: tenants live on all of them. */
function shardDbs(c: Context<AppEnv>): Db[] {
  return shardDatabases(c.env).flatMap((d1, n) => (!d1 ? [] : n === 0 ? [c.var.db] : [createDb(d1)]));
}

type Handler<R extends keyof typeof routes> = RouteHandler<(typeof routes)[R], AppEnv>;

export const listTenants: Handler<"listTenants"> = async (c) => {
  c.var.access.platformAdmin();
  const rows = await listed(
    c,
    c.req.valid("query"),
    (limit, cursor) => tenants.listTenantsOf(shardDbs(c), limit, afterKey(cursor, "string")),
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
  // A tenant the directory does not name yet is made on the shard the request runs on (src/db/shards.ts).
  const home = c.var.home;
  if (home && !home.placed && home.shard !== 0) await placeTenant(c.env, tenantId, home.shard);
  const { row, created } = await tenants.putTenant(c.var.db, secretBox(c.env.ENCRYPTION_KEYS), tenantId, input);
  const view = tenantView(row);
  return created ? c.json(view, 201) : c.json(view, 200);
};
