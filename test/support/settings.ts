import { env } from "cloudflare:workers";
import { createDb } from "../../src/db";
import { assets, connections } from "../../src/db/schema";
import { unique } from "./factories";

/**
 * Inserts an asset (and the connection it reads through) straight into D1, for tests of
 * asset settings that must not depend on the assets API. Returns the asset id.
 */
export async function insertAsset(tenant: string, projectId: number): Promise<number> {
  const db = createDb(env.DB);
  const now = new Date().toISOString();
  const [connection] = await db
    .insert(connections)
    .values({
      tenantId: tenant,
      projectId,
      name: unique("conn"),
      type: "S3",
      payload: { bucket: "test-bucket" },
      credentialType: "AWS",
      credentialSecret: "{}",
      createdBy: "test",
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: connections.id });
  const [asset] = await db
    .insert(assets)
    .values({
      tenantId: tenant,
      projectId,
      connectionId: connection!.id,
      name: unique("asset"),
      type: "S3",
      options: {},
      payload: { path: "data/orders.csv" },
      createdBy: "test",
      createdAt: now,
      updatedAt: now,
    })
    .returning({ id: assets.id });
  return asset!.id;
}
