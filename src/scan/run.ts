import type { Db } from "../db";
import type { Env } from "../env";
import type { ScanJobRow } from "../jobs/scan-jobs";
import { ConnectorError } from "./connectors/types";

/**
 * Runs a scan job: reads the asset through its connector, profiles it, and hands the profile
 * to the asset's AssetMonitor. The connectors land one by one; until an asset's connector type
 * has one, its jobs fail with a clear reason.
 */
export async function runScanJob(_env: Env, _db: Db, job: ScanJobRow): Promise<void> {
  throw new ConnectorError(`no scanner is available yet for job ${job.id}`, "unsupported");
}
