import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { orders, type Problem } from "../scenario/data";

/** An asset as the API returned it (what applying a scan to its monitor needs). */
export interface ApiAsset {
  id: number;
  name: string;
  connection_id: number;
}

/** Applies scan `n` of the orders scenario (with `problem`, if any) straight to the asset's AssetMonitor. */
export async function applyOrdersScan(
  tenant: string,
  projectId: number,
  asset: ApiAsset,
  n: number,
  opts: { jobId: string; scanTime: Date; problem?: Problem },
) {
  const builder = new ProfileBuilder({ idAttributes: ["id"], inferFromText: false });
  builder.add(orders(n, opts.scanTime, opts.problem) as unknown as Record<string, unknown>[]);
  return assetMonitor(env, tenant, asset.id).applyScan({
    asset: {
      tenantId: tenant,
      id: asset.id,
      name: asset.name,
      type: "S3",
      projectId,
      connectionId: asset.connection_id,
    },
    jobId: opts.jobId,
    createdAt: new Date().toISOString(),
    scanTime: opts.scanTime.toISOString(),
    profile: builder.finish(),
  });
}

/**
 * The rows of the asset's alerts (kept in its AssetMonitor's storage since issue 38) that `where`
 * selects, by id, with the columns the table has (job_id, type, details as JSON text, ...).
 */
export function keptAlerts<T = Record<string, unknown>>(
  tenant: string,
  assetId: number,
  where = "true",
  ...binds: SqlStorageValue[]
): Promise<T[]> {
  return runInDurableObject(assetMonitor(env, tenant, assetId), (_o, state) =>
    state.storage.sql
      .exec(`SELECT * FROM alerts WHERE ${where} ORDER BY id`, ...binds)
      .toArray()
      .map((r) => ({ ...r }) as T),
  );
}
