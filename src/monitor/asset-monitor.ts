import { DurableObject } from "cloudflare:workers";
import type { Env } from "../env";

/**
 * One object per asset (id "<tenant>:<assetId>"): applies scan results serially — metric
 * history, policies, alerts, incidents, DQ score. Declared from day one so the binding and its
 * SQLite storage exist; the scan and incident issues give it its methods.
 */
export class AssetMonitor extends DurableObject<Env> {}
