import type { Env } from "../env";

/** The AssetMonitor of an asset: one Durable Object per "<tenant>:<assetId>". */
export function assetMonitor(env: Pick<Env, "ASSET_MONITOR">, tenantId: string, assetId: number) {
  return env.ASSET_MONITOR.get(env.ASSET_MONITOR.idFromName(`${tenantId}:${assetId}`));
}
