/**
 * The AssetMonitor's metric history (monitor/history-store.ts): a scan's points written in one
 * statement (json_each of one array) read back exactly as measured, excluded ones with the
 * policies that excluded them; history() answers each metric's newest HISTORY_PER_METRIC points
 * through the index on (metric, time); the index on job_id that no query used is gone, in new
 * objects and in those made before.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { closedCondition } from "../../src/detection/closes";
import type { EvaluatedPoint } from "../../src/detection/types";
import { EXCLUDED_SINCE, HISTORY_PER_METRIC, HistoryStore } from "../../src/monitor/history-store";

/** A fresh object of its own (its constructor has migrated its storage). */
const freshMonitor = () => env.ASSET_MONITOR.get(env.ASSET_MONITOR.idFromName(`history-store-${crypto.randomUUID()}`));

/** The indexes of metric_points by name, and whether each is partial. */
const indexesOf = (sql: SqlStorage) =>
  sql
    .exec<{ name: string; partial: number }>(
      "select name, partial from pragma_index_list('metric_points') order by name",
    )
    .toArray();
const indexNames = (sql: SqlStorage) => indexesOf(sql).map((r) => r.name);

/**
 * Doubles that text must carry exactly: the smallest subnormal, the largest, repeating fractions,
 * 2^53 + 2. (Not every double comes back: SQLite's JSON reads 1e-300 as 9.999999999999999e-301,
 * as it did before this change; a metric's values are rates, counts and data values far from that.)
 */
const VALUES = [
  5e-324,
  1.7976931348623157e308,
  -1.7976931348623157e308,
  0.1 + 0.2,
  1 / 3,
  -2 / 3,
  2 ** 53 + 2,
  0,
  42,
  -7.5,
  1e-7,
];

function record(store: HistoryStore, jobId: string, time: string, points: EvaluatedPoint[]) {
  store.recordScan({
    jobId,
    scanTime: time,
    appliedAt: time,
    points,
    schema: [],
    training: [],
    kinds: {},
    result: { jobId, alerts: 0, dqScore: null, replay: false },
  });
}

describe("the metric history's points", () => {
  it("read back exactly as recorded, excluded ones with their policies, several scans apart", async () => {
    const stub = freshMonitor();
    const series = await runInDurableObject(stub, (_instance, state) => {
      const store = new HistoryStore(state.storage);
      const points = (k: number): EvaluatedPoint[] =>
        VALUES.map((value, i) =>
          i % 4 === 1
            ? {
                metric: `attr:c${i}:mean`,
                value: value + k,
                excluded: true,
                excluded_by: ["distribution_drift", "value_range"],
              }
            : { metric: `attr:c${i}:mean`, value: k === 0 ? value : value / 2, excluded: false },
        );
      record(store, "job_1", "2026-11-26T09:00:00.000Z", points(0));
      record(store, "job_2", "2026-11-26T10:00:00.000Z", points(1));
      // A replay of a job's points changes nothing (ON CONFLICT DO NOTHING).
      record(store, "job_1_again", "2026-11-26T11:00:00.000Z", []);
      const excludedBy = state.storage.sql
        .exec<{ by: string }>("select distinct excluded_by as by from metric_points where excluded = 1")
        .toArray();
      return { series: VALUES.map((_, i) => store.series(`attr:c${i}:mean`)), excludedBy, history: store.history() };
    });
    VALUES.forEach((value, i) => {
      const [first, second] = series.series[i]!;
      const excluded = i % 4 === 1;
      expect(first).toEqual({ job_id: "job_1", time: "2026-11-26T09:00:00.000Z", value, offset: 0, excluded });
      expect(second).toEqual({
        job_id: "job_2",
        time: "2026-11-26T10:00:00.000Z",
        value: excluded ? value + 1 : value / 2,
        offset: 0,
        excluded,
      });
      expect(series.history[`attr:c${i}:mean`]?.map((p) => p.value)).toEqual([first!.value, second!.value]);
    });
    expect(series.excludedBy).toEqual([{ by: JSON.stringify(["distribution_drift", "value_range"]) }]);
  });

  it("give the detectors each metric's newest points, oldest first, whatever order the scans came in", async () => {
    const stub = freshMonitor();
    const scans = HISTORY_PER_METRIC + 30;
    // Scan times in a scrambled order (a backfill, a late upload): i * 37 mod 151 (a prime above
    // `scans`) visits each of 0…150 once.
    const order = Array.from({ length: 151 }, (_, i) => (i * 37) % 151).filter((k) => k < scans);
    const timeOf = (k: number) => new Date(Date.UTC(2026, 0, 1) + k * 3_600_000).toISOString();
    const history = await runInDurableObject(stub, (_instance, state) => {
      const store = new HistoryStore(state.storage);
      for (const k of order) {
        const points: EvaluatedPoint[] = [{ metric: "row_count", value: k, excluded: false }];
        // A second metric with a short history, recorded by a few of the scans only.
        if (k % 50 === 0) points.push({ metric: "attr:a:mean", value: 1000 - k, excluded: k === 100 });
        record(store, `job_${k}`, timeOf(k), points);
      }
      return store.history();
    });
    const newest = Array.from({ length: scans }, (_, k) => k).slice(-HISTORY_PER_METRIC);
    expect(history.row_count?.map((p) => [p.time, p.value, p.job_id])).toEqual(
      newest.map((k) => [timeOf(k), k, `job_${k}`]),
    );
    expect(history["attr:a:mean"]).toEqual(
      [0, 50, 100].map((k) => ({ job_id: `job_${k}`, time: timeOf(k), value: 1000 - k, excluded: k === 100 })),
    );
  });

  it("have no index on job_id, in an object made before the change too", async () => {
    const stub = freshMonitor();
    const indexes = await runInDurableObject(stub, (_instance, state) => {
      const names = () => indexNames(state.storage.sql);
      const now = names();
      // As an object made before 2026-11-26 has it, until its next start.
      state.storage.sql.exec("CREATE INDEX metric_points_job ON metric_points (job_id)");
      const before = names();
      new HistoryStore(state.storage).migrate();
      return { now, before, after: names() };
    });
    expect(indexes.now).not.toContain("metric_points_job");
    expect(indexes.before).toContain("metric_points_job");
    expect(indexes.after).toEqual(indexes.now);
  });

  it("are read through an index on (metric, time), which an object made before gets at its next start", async () => {
    const stub = freshMonitor();
    const seen = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const names = () => indexNames(sql);
      const now = names();
      // As an object made before 2026-11-26 (16:30 UTC) has its table, until its next start.
      sql.exec("DROP INDEX metric_points_time");
      const before = names();
      new HistoryStore(state.storage).migrate();
      const columns = sql
        .exec<{ name: string }>("select name from pragma_index_info('metric_points_time') order by seqno")
        .toArray()
        .map((r) => r.name);
      return { now, before, after: names(), columns };
    });
    expect(seen.now).toContain("metric_points_time");
    expect(seen.before).not.toContain("metric_points_time");
    expect(seen.after).toEqual(seen.now);
    expect(seen.columns).toEqual(["metric", "time"]);
  });

  it("are kept in memory between scans as storage holds them, through ties, late scans, adoption and pruning", async () => {
    const stub = freshMonitor();
    const timeOf = (k: number) => new Date(Date.UTC(2026, 0, 1) + k * 3_600_000).toISOString();
    const steps = await runInDurableObject(stub, (_instance, state) => {
      const store = new HistoryStore(state.storage);
      // Each step: what the long-lived store answers, and what a store reading storage afresh does.
      const compared: { step: string; kept: unknown; read: unknown }[] = [];
      const compare = (step: string) =>
        compared.push({ step, kept: store.history(), read: new HistoryStore(state.storage).history() });
      compare("empty");
      const scan = (k: number, job = `job_${k}`) =>
        record(store, job, timeOf(k), [
          { metric: "row_count", value: 1000 + k, excluded: false },
          {
            metric: "attr:a:mean",
            value: k % 7,
            excluded: k % 11 === 0,
            ...(k % 11 === 0 ? { excluded_by: ["value_range"] } : {}),
          },
          {
            metric: "attr:c:value:x",
            value: k / 100,
            excluded: k >= 140,
            ...(k >= 140 ? { excluded_by: ["distribution_drift"] } : {}),
          },
          // A metric that appears part way through.
          ...(k >= 100 ? [{ metric: "attr:b:mean", value: -k, excluded: false }] : []),
        ]);
      for (let k = 0; k < HISTORY_PER_METRIC + 25; k++) {
        scan(k);
        if (k % 20 === 0 || k >= HISTORY_PER_METRIC - 2) compare(`scan ${k}`);
      }
      // A second job at the same time as the newest (a tie), then a late scan (a backfill).
      scan(HISTORY_PER_METRIC + 24, "job_tie");
      compare("tie");
      scan(HISTORY_PER_METRIC + 25);
      compare("after the tie");
      scan(3, "job_late");
      compare("late scan");
      scan(HISTORY_PER_METRIC + 26);
      compare("after the late scan");
      // Adopting a level: old points move, the share metric restarts, excluded points are released.
      const plan = store.planAdoption({
        policy: "distribution_drift",
        attribute: "c",
        openedAt: timeOf(140),
        levelSince: timeOf(140),
        window: 30,
      });
      store.applyAdoption({
        ...plan,
        offsets: [{ metric: "row_count", shift: 5, before: timeOf(140) }],
      });
      compare("adoption");
      // A late scan of a new share metric only, from before its change point: left out.
      record(store, "job_share_late", timeOf(130), [{ metric: "attr:c:value:z", value: 1, excluded: false }]);
      compare("a late share point");
      scan(HISTORY_PER_METRIC + 27);
      compare("after the adoption");
      store.pruneBefore(timeOf(100));
      compare("pruned");
      scan(HISTORY_PER_METRIC + 28);
      compare("after pruning");
      // What a caller does with its copy stays with it.
      const copy = store.history();
      copy.row_count!.push({ job_id: "x", time: timeOf(999), value: 0, excluded: false });
      delete copy["attr:a:mean"];
      copy.row_count![0]!.value = -1;
      compare("after a caller changed its copy");
      return { compared, plan };
    });
    expect(steps.compared.length).toBeGreaterThan(10);
    for (const { step, kept, read } of steps.compared) expect(kept, step).toEqual(read);
    const last = steps.compared.at(-1)!.read as Record<string, { time: string; value: number; excluded: boolean }[]>;
    // The adoption moved row_count's old points, restarted the share metric and released its points.
    expect(last.row_count![0]).toMatchObject({ time: timeOf(100), value: 1105 });
    expect(last["attr:c:value:x"]![0]!.time).toBe(timeOf(140));
    // (the scans after it are excluded again by the test's own rule)
    expect(last["attr:c:value:x"]!.map((p) => p.excluded)).toEqual(
      last["attr:c:value:x"]!.map((p) => p.time >= timeOf(HISTORY_PER_METRIC + 27)),
    );
    expect(steps.plan.changePoints.length).toBe(1);
  });

  it("excluded since a time are found through a partial index, which an object made before gets at its next start", async () => {
    const stub = freshMonitor();
    const seen = await runInDurableObject(stub, (_instance, state) => {
      const sql = state.storage.sql;
      const names = () => indexesOf(sql).filter((r) => r.name === "metric_points_excluded");
      const plan = sql
        .exec<{ detail: string }>(`EXPLAIN QUERY PLAN SELECT metric FROM metric_points ${EXCLUDED_SINCE}`, "2026")
        .toArray()
        .map((r) => r.detail)
        .join("; ");
      const columns = sql
        .exec<{ name: string }>("select name from pragma_index_info('metric_points_excluded') order by seqno")
        .toArray()
        .map((r) => r.name);
      const now = names();
      // As an object made before 2026-11-26 (18:10 UTC) has its table, until its next start.
      sql.exec("DROP INDEX metric_points_excluded");
      const before = names();
      new HistoryStore(state.storage).migrate();
      return { plan, columns, now, before, after: names() };
    });
    expect(seen.plan).toContain("USING INDEX metric_points_excluded");
    expect(seen.columns).toEqual(["time"]);
    expect(seen.now).toEqual([{ name: "metric_points_excluded", partial: 1 }]);
    expect(seen.before).toEqual([]);
    expect(seen.after).toEqual(seen.now);
  });
});

describe("the closes the object remembers", () => {
  it("are pruned by retention like its points: a close from before the cutoff is forgotten", async () => {
    const stub = freshMonitor();
    const left = await runInDurableObject(stub, (_instance, state) => {
      const store = new HistoryStore(state.storage);
      const close = (attribute: string, incidentId: number, closedAt: string) =>
        store.rememberClose(
          closedCondition(
            { id: incidentId, policy: "value_range", attribute, segment: "", severity: "MEDIUM" },
            { metric: `attr:${attribute}:mean`, observed: 12, expected: { low: 0, high: 10 }, deviation: 1.4 },
            "FALSE_POSITIVE",
            closedAt,
          ),
        );
      close("old", 1, "2026-01-01T00:00:00.000Z");
      close("recent", 2, "2026-03-01T00:00:00.000Z");
      record(store, "job_old", "2026-01-01T00:00:00.000Z", [{ metric: "row_count", value: 1, excluded: false }]);
      store.pruneBefore("2026-02-01T00:00:00.000Z");
      return { closes: store.closes().map((c) => c.attribute), history: store.history() };
    });
    expect(left.closes).toEqual(["recent"]);
    expect(left.history).toEqual({});
  });
});
