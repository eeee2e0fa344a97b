import type { Context } from "hono";
import type { AppEnv } from "../../app-env";
import { queueScan, type ScanJobRequest, scanInBatch } from "../../jobs/scan-requests";
import { settleCheck, writeChecked } from "../access";

/**
 * Queues a scan of an asset asked for by a request (POST …/scans, a JSON batch_data), under an
 * `inBatch` grant (PROJECT_EDITOR on the asset). One round trip: the access check
 * (Access.assetInBatch), the job's insert (where the caller may and the request fits the asset)
 * and its audit row are one batch (jobs/scan-requests.ts, scanInBatch). A request naming a table,
 * checked against the asset's database, reads the asset first (two).
 */
export async function queueChecked(
  c: Context<AppEnv>,
  tenant: string,
  assetId: number,
  request: ScanJobRequest,
  trigger: string,
) {
  const scan = scanInBatch(c.var.db, { tenantId: tenant, id: assetId }, request, trigger);
  if (!scan) {
    const { asset } = await settleCheck(c, c.var.access.assetHead(tenant, assetId, "PROJECT_EDITOR"));
    return queueScan(c.var.db, c.env, asset, request, trigger);
  }
  const check = c.var.access.assetInBatch(tenant, assetId, "PROJECT_EDITOR");
  const { access, results } = await writeChecked(c, check, [scan.insert(check.allowed)], { status: 202 });
  return scan.queue(c.env, results[0].length > 0, access.asset);
}
