/**
 * An asset's alerts, as the per-asset readers see them (scan alerts, alerts by refs, a metric's
 * history). They live in the asset's Durable Object (issue 38); rows the history's move has not
 * reached yet are still in D1's alerts table, read beside them in the caller's D1 batch (the same
 * round trip as its access check), and an alert in both places counts once.
 */

import { and, asc, eq, type SQL, sql } from "drizzle-orm";
import type { Db } from "../db";
import { alerts, type KeptAlert } from "../db/schema";
import { movedStepsQuery } from "./monitor-store";

/** Which of an asset's alerts: one job's, the given ids (an incident's alert_refs), or one metric's. */
export type AlertQuery = { jobId: string } | { ids: number[] } | { metric: string };

/** Where an asset's alerts are kept: its AssetMonitor (or anything that reads its store). */
export interface AlertSource {
  /** The alerts, by id, and the steps of the move out of D1 the object had taken in when it read them. */
  alerts(query: AlertQuery): Promise<{ alerts: KeptAlert[]; movedSteps: number; hasJob?: boolean }>;
}

type Asset = { tenantId: string; id: number };

/** The asset's alerts still in D1 that `query` selects, by id: a query a batch can carry (for no ids too). */
function legacyAlertsQuery(db: Db, asset: Asset, query: AlertQuery) {
  const which: SQL =
    "jobId" in query
      ? eq(alerts.jobId, query.jobId)
      : "metric" in query
        ? eq(alerts.metric, query.metric)
        : sql`${alerts.id} in (select value from json_each(${JSON.stringify([...new Set(query.ids)])}))`;
  return db
    .select()
    .from(alerts)
    .where(and(eq(alerts.tenantId, asset.tenantId), eq(alerts.assetId, asset.id), which))
    .orderBy(asc(alerts.id));
}

/** The two statements of a read of the asset's alerts for the caller's D1 batch: the legacy rows, the mark. */
export function legacyAlertsStatements(db: Db, asset: Asset, query: AlertQuery) {
  return [legacyAlertsQuery(db, asset, query), movedStepsQuery(db, asset)] as const;
}

type LegacyRows = readonly [Awaited<ReturnType<typeof legacyAlertsQuery>>, Awaited<ReturnType<typeof movedStepsQuery>>];

/**
 * The alerts of the object's answer and the legacy rows together, by id; undefined when a step of
 * the move raced the read (the object answered before its copy, D1 after its delete): read again
 * with readAlerts.
 */
export function mergedAlerts(
  kept: { alerts: KeptAlert[]; movedSteps: number },
  [legacy, marks]: LegacyRows,
): KeptAlert[] | undefined {
  if ((marks[0]?.movedSteps ?? 0) > kept.movedSteps) return undefined;
  if (legacy.length === 0) return kept.alerts;
  const byId = new Map<number, KeptAlert>(
    legacy.map(({ tenantId: _t, assetId: _a, projectId: _p, connectionId: _c, ...a }) => [a.id, a]),
  );
  for (const a of kept.alerts) byId.set(a.id, a);
  return [...byId.values()].sort((a, b) => a.id - b.id);
}

/** Reads of a page that a step of the move raced before one is taken as it is (each race is a move step's). */
export const MOVE_RACE_READS = 3;

/** The asset's alerts `query` selects, by id: the object and D1 in parallel (see mergedAlerts). */
export async function readAlerts(db: Db, source: AlertSource, asset: Asset, query: AlertQuery): Promise<KeptAlert[]> {
  for (let read = 1; ; read++) {
    const [kept, rows] = await Promise.all([source.alerts(query), db.batch(legacyAlertsStatements(db, asset, query))]);
    const merged = mergedAlerts(kept, rows);
    if (merged) return merged;
    if (read >= MOVE_RACE_READS) return mergedAlerts({ ...kept, movedSteps: Number.MAX_SAFE_INTEGER }, rows)!;
  }
}
