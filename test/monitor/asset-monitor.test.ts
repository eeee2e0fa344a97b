import { evictDurableObject, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import type { MonitoredAsset } from "../../src/contracts/asset-monitor";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import type { CloseReason } from "../../src/db/schema";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { orders, type Problem } from "../scenario/data";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { historyRows } from "../support/incidents";
import { keptAlerts } from "../support/monitor";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";

async function monitoredAsset(): Promise<MonitoredAsset> {
  const tenantId = await createTenant();
  const projectId = await createProject(tenantId);
  const connectionId = await insertConnection(tenantId, { projectId, type: "S3" });
  const asset = await createAsset(tenantId, projectId, connectionId, {
    type: "S3",
    payload: { path: "x.csv", format: "csv" },
  });
  return {
    tenantId,
    id: asset.id,
    name: asset.name,
    type: "S3",
    projectId,
    connectionId,
    idAttributes: ["id"],
    timestampAttribute: "updated_at",
  };
}

/** A profile of one scan of the orders table, as a connector would produce it (`nullEmail`: no e-mail at all). */
function profileOf(scan: number, problem?: Problem, nullEmail = false) {
  const builder = new ProfileBuilder({ idAttributes: ["id"], timestampAttribute: "updated_at", inferFromText: false });
  const rows = orders(scan, new Date(), problem).map((r) => (nullEmail ? { ...r, email: null } : r));
  builder.add(rows as unknown as Record<string, unknown>[]);
  return builder.finish();
}

async function rows<T>(sql: string, ...params: unknown[]): Promise<T[]> {
  return (
    await env.DB.prepare(sql)
      .bind(...params)
      .all<T>()
  ).results;
}

interface IncidentRow {
  id: number;
  state: string;
  alert_count: number;
  clean_scans: number;
  level_scans: number;
  close_reason: string | null;
  severity: string;
  impact: string;
  tag: string;
}
const incidentsOf = (a: MonitoredAsset) =>
  rows<IncidentRow>("select * from incidents where tenant_id = ? and asset_id = ? order by id", a.tenantId, a.id);
/** The incident's history, kept by its asset's object (issue 38). */
const historyOf = historyRows;

describe("AssetMonitor incident aggregation", () => {
  it("opens, collects, auto-closes after 3 clean scans, and reopens as a new incident", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    let scan = 0;
    const apply = (problem?: Problem) => {
      scan += 1;
      return stub.applyScan({
        asset,
        jobId: `job_agg_${asset.id}_${scan}`,
        createdAt: new Date().toISOString(),
        scanTime: new Date().toISOString(),
        profile: profileOf(scan, problem),
      });
    };

    expect((await apply("null_spike")).alerts).toBe(1);
    let [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({
      state: "OPEN",
      alert_count: 1,
      severity: "MEDIUM",
      impact: "LOW",
      tag: "completeness",
    });
    const [alert] = await keptAlerts<{ id: number }>(asset.tenantId, asset.id, "job_id = ?", `job_agg_${asset.id}_1`);
    expect(await historyOf(incident!.id)).toEqual([
      expect.objectContaining({
        from_state: null,
        to_state: "OPEN",
        alert_refs: JSON.stringify([alert!.id]),
        actor: "system",
      }),
    ]);

    // The same problem again is no new alert: the incident records the scan.
    expect((await apply("null_spike")).alerts).toBe(0);
    [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "OPEN", alert_count: 1, clean_scans: 0, level_scans: 2 });
    expect((await historyOf(incident!.id))[1]).toMatchObject({
      from_state: "OPEN",
      to_state: "OPEN",
      alert_refs: "[]",
      details: expect.stringContaining('"metric":"attr:email:missing_rate"'),
    });

    await apply();
    await apply();
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "OPEN", clean_scans: 2 });
    await apply();
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "CLOSED", close_reason: "AUTO_RESOLVED" });
    const history = await historyOf(incident!.id);
    expect(history.map((h) => `${h.from_state}>${h.to_state}`)).toEqual(["null>OPEN", "OPEN>OPEN", "OPEN>CLOSED"]);
    expect(history[2]).toMatchObject({ reason: "AUTO_RESOLVED", alert_refs: "[]" });

    await apply("null_spike");
    const all = await incidentsOf(asset);
    expect(all.map((i) => i.state)).toEqual(["CLOSED", "OPEN"]);
  });

  it("applies a job once: a replay, even after the object lost its record of it, writes nothing new", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    const input = {
      asset,
      jobId: `job_replay_${asset.id}`,
      createdAt: new Date().toISOString(),
      scanTime: new Date().toISOString(),
      profile: profileOf(1, "duplicate_ids"),
    };
    const first = await stub.applyScan(input);
    expect(first).toMatchObject({ alerts: 1, replay: false });
    expect(await stub.applyScan(input)).toMatchObject({ alerts: 1, replay: true });
    // Crash between the D1 batch and the object's own record: D1's mark of the asset names the job.
    await runInDurableObject(stub, (_instance, state) => {
      state.storage.sql.exec("DELETE FROM applied_jobs WHERE job_id = ?", input.jobId);
    });
    expect(await stub.applyScan(input)).toMatchObject({ replay: true });
    expect(await keptAlerts(asset.tenantId, asset.id, "job_id = ?", input.jobId)).toHaveLength(1);
    const incidents = await incidentsOf(asset);
    expect(incidents).toHaveLength(1);
    expect(incidents[0]).toMatchObject({ alert_count: 1 });
    expect(await historyOf(incidents[0]!.id)).toHaveLength(1);
  });

  it("a replay overtaken by the asset's next job writes nothing twice; a replay records the job's DQ score", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    const scanOf = (n: number) => ({
      asset,
      jobId: `job_overtaken_${asset.id}_${n}`,
      createdAt: new Date().toISOString(),
      scanTime: new Date(Date.now() + n * 1000).toISOString(),
      profile: profileOf(n, "duplicate_ids"),
    });
    // As if the object had failed right after D1 answered: the job is in D1, not in the object.
    const forget = (jobId: string) =>
      runInDurableObject(stub, (_o, state) => {
        state.storage.sql.exec("DELETE FROM applied_jobs WHERE job_id = ?", jobId);
        state.storage.sql.exec("DELETE FROM dq_scores WHERE job_id = ?", jobId);
      });
    const scored = (jobId: string) =>
      runInDurableObject(
        stub,
        (_o, state) => state.storage.sql.exec("SELECT 1 FROM dq_scores WHERE job_id = ?", jobId).toArray().length,
      );
    const first = scanOf(1);
    expect(await stub.applyScan(first)).toMatchObject({ alerts: 1, replay: false });
    expect(await scored(first.jobId)).toBe(1);
    await forget(first.jobId);
    expect(await stub.applyScan(first)).toMatchObject({ replay: true });
    expect(await scored(first.jobId)).toBe(1);

    await forget(first.jobId);
    expect(await stub.applyScan(scanOf(2))).toMatchObject({ replay: false });
    const [incident] = await incidentsOf(asset);
    const entries = (await historyOf(incident!.id)).length;
    expect(entries).toBe(2);
    expect(await stub.applyScan(first)).toMatchObject({ replay: true });
    expect(await incidentsOf(asset)).toEqual([incident]);
    expect(await historyOf(incident!.id)).toHaveLength(entries);
  });

  it("keeps its history across eviction and honours a per-asset auto-close threshold", async () => {
    const asset = await monitoredAsset();
    await env.DB.prepare(
      "insert into asset_policies (asset_id, tenant_id, overrides, auto_close_after, updated_at) values (?, ?, '{}', 1, ?)",
    )
      .bind(asset.id, asset.tenantId, new Date().toISOString())
      .run();
    let stub = assetMonitor(env, asset.tenantId, asset.id);
    const job = (n: number) => `job_evict_${asset.id}_${n}`;
    const now = () => new Date().toISOString();
    for (let n = 1; n <= 8; n++) {
      await stub.applyScan({ asset, jobId: job(n), createdAt: now(), scanTime: now(), profile: profileOf(n) });
    }
    await evictDurableObject(stub);
    stub = assetMonitor(env, asset.tenantId, asset.id);
    // Eight clean scans of history survived: the row-count detector is trained and sees the drop.
    const drop = await stub.applyScan({
      asset,
      jobId: job(9),
      createdAt: now(),
      scanTime: now(),
      profile: profileOf(9, "row_drop"),
    });
    expect(drop.alerts).toBe(1);
    expect(
      await stub.applyScan({ asset, jobId: job(9), createdAt: now(), scanTime: now(), profile: profileOf(9) }),
    ).toMatchObject({
      replay: true,
    });
    await stub.applyScan({ asset, jobId: job(10), createdAt: now(), scanTime: now(), profile: profileOf(10) });
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "CLOSED", close_reason: "AUTO_RESOLVED" });
  });

  it("manual close and reopen; EXPECTED gives the anomalous points back to the baseline", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    const now = () => new Date().toISOString();
    for (let n = 1; n <= 8; n++) {
      await stub.applyScan({
        asset,
        jobId: `job_fb_${asset.id}_${n}`,
        createdAt: now(),
        scanTime: now(),
        profile: profileOf(n),
      });
    }
    const dropJob = `job_fb_${asset.id}_9`;
    await stub.applyScan({
      asset,
      jobId: dropJob,
      createdAt: now(),
      scanTime: now(),
      profile: profileOf(9, "row_drop"),
    });
    const excluded = () =>
      runInDurableObject(
        stub,
        (_i, state) =>
          state.storage.sql
            .exec<{ n: number }>("select count(*) as n from metric_points where job_id = ? and excluded = 1", dropJob)
            .one().n,
      );
    expect(await excluded()).toBeGreaterThan(0);
    const [incident] = await incidentsOf(asset);

    const base = { tenantId: asset.tenantId, incidentId: incident!.id, actor: "ada@example.com" };
    expect(await stub.setIncidentState({ ...base, state: "OPEN" })).toMatchObject({ ok: false, problem: "conflict" });
    expect(await stub.setIncidentState({ ...base, incidentId: 99_999_999, state: "CLOSED" })).toMatchObject({
      problem: "not_found",
    });
    expect(
      await stub.setIncidentState({ ...base, state: "CLOSED", reason: "EXPECTED", note: "planned purge" }),
    ).toMatchObject({ ok: true });
    expect(await excluded()).toBe(0);
    const [closed] = await rows<{ state: string; close_reason: string; first_response_at: string | null }>(
      "select state, close_reason, first_response_at from incidents where id = ?",
      incident!.id,
    );
    expect(closed).toMatchObject({ state: "CLOSED", close_reason: "EXPECTED", first_response_at: expect.any(String) });
    expect((await historyOf(incident!.id)).at(-1)).toMatchObject({
      from_state: "OPEN",
      to_state: "CLOSED",
      actor: "ada@example.com",
      reason: "EXPECTED",
    });
    expect(await stub.setIncidentState({ ...base, state: "OPEN", note: "not expected after all" })).toMatchObject({
      ok: true,
    });
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "OPEN", close_reason: null });
  });

  it("an asset that moves to another project takes its incidents and alerts along", async () => {
    const tenantId = await createTenant();
    const from = await createProject(tenantId);
    const to = await createProject(tenantId);
    const connectionId = await insertConnection(tenantId, { projectId: null, type: "S3" });
    const created = await createAsset(tenantId, from, connectionId, {
      type: "S3",
      payload: { path: "x.csv", format: "csv" },
    });
    const asset: MonitoredAsset = {
      tenantId,
      id: created.id,
      name: created.name,
      type: "S3",
      projectId: from,
      connectionId,
    };
    await assetMonitor(env, tenantId, asset.id).applyScan({
      asset,
      jobId: `job_move_${asset.id}`,
      createdAt: new Date().toISOString(),
      scanTime: new Date().toISOString(),
      profile: profileOf(1, "null_spike"),
    });
    const moved = await call("POST", `/api/backend/${tenantId}/configuration/projects/${to}/assets/move`, {
      as: admin,
      body: { source_project_id: from, source_asset_ids: [String(asset.id)] },
    });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(await rows("select project_id from incidents where asset_id = ?", asset.id)).toEqual([{ project_id: to }]);
    // Its alerts are its object's (issue 38): they stay with it, and the asset's new project sees them.
    const [alert] = await keptAlerts<{ id: number }>(tenantId, asset.id);
    const refs = await call("POST", `/api/backend/${tenantId}/configuration/alerts/by_filters`, {
      as: admin,
      body: { asset_id: String(asset.id), alert_refs: [alert!.id] },
    });
    expect(refs.status).toBe(200);
    expect(refs.body).toEqual([expect.objectContaining({ id: alert!.id, source: String(asset.id) })]);
  });

  it("rebuilds incidents from alerts no incident refers to, once", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    await stub.applyScan({
      asset,
      jobId: `job_rb_${asset.id}`,
      createdAt: new Date().toISOString(),
      scanTime: new Date().toISOString(),
      profile: profileOf(1, "null_spike"),
    });
    // As if the incidents were lost: the alerts stay.
    await env.DB.prepare("delete from incidents where tenant_id = ? and asset_id = ?")
      .bind(asset.tenantId, asset.id)
      .run();
    const since = new Date(Date.now() - 30 * 86_400_000).toISOString();
    expect(await stub.rebuildIncidents({ asset, since })).toEqual({ incidents: 1, alerts: 1 });
    expect(await stub.rebuildIncidents({ asset, since })).toEqual({ incidents: 0, alerts: 0 });
    const [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "OPEN", alert_count: 1, tag: "completeness" });
  });
});

describe("AssetMonitor is serial", () => {
  /** Everything the calls left behind, without ids and times (which differ between two assets). */
  async function outcome(asset: MonitoredAsset) {
    const incidents = await incidentsOf(asset);
    return Promise.all(
      incidents.map(async (i) => ({
        state: i.state,
        alert_count: i.alert_count,
        clean_scans: i.clean_scans,
        close_reason: i.close_reason,
        severity: i.severity,
        history: (await historyOf(i.id)).map((h) => ({
          from: h.from_state,
          to: h.to_state,
          actor: h.actor,
          reason: h.reason,
          alerts: JSON.parse(h.alert_refs).length,
        })),
      })),
    );
  }

  it("concurrent scans and state changes of one asset end as if run one after another", async () => {
    const [together, inTurn] = [await monitoredAsset(), await monitoredAsset()];
    const start = Date.parse("2026-11-01T00:00:00Z");
    const scan = (asset: MonitoredAsset, n: number, problem?: Problem) => {
      const time = new Date(start + n * 3_600_000).toISOString();
      return {
        asset,
        jobId: `job_serial_${asset.id}_${n}`,
        createdAt: time,
        scanTime: time,
        profile: profileOf(n, problem),
      };
    };
    // The same calls, in the same order, for both assets: scans with duplicated ids around two closes.
    const calls = (asset: MonitoredAsset, incidentId: number) => {
      const stub = assetMonitor(env, asset.tenantId, asset.id);
      const close = {
        tenantId: asset.tenantId,
        incidentId,
        state: "CLOSED" as const,
        reason: "FIXED" as const,
        actor: "ada@example.com",
      };
      return [
        () => stub.applyScan(scan(asset, 2, "duplicate_ids")),
        () => stub.setIncidentState(close),
        () => stub.applyScan(scan(asset, 3, "duplicate_ids")),
        () => stub.applyScan(scan(asset, 4, "duplicate_ids")),
        () => stub.setIncidentState(close),
        () => stub.applyScan(scan(asset, 5)),
      ];
    };
    const firstIncident = async (asset: MonitoredAsset) => {
      await assetMonitor(env, asset.tenantId, asset.id).applyScan(scan(asset, 1, "duplicate_ids"));
      return (await incidentsOf(asset))[0]!.id;
    };

    const results = await Promise.all(calls(together, await firstIncident(together)).map((call) => call()));
    const expected = [];
    for (const call of calls(inTurn, await firstIncident(inTurn))) expected.push(await call());

    // A change's answer carries the incident's history (times of now, ids of its asset): outcome() compares it.
    const strip = (r: unknown) =>
      JSON.parse(JSON.stringify(r, (k, v) => (k === "jobId" || k === "history" ? undefined : v)));
    expect(results.map(strip)).toEqual(expected.map(strip));
    expect(await outcome(together)).toEqual(await outcome(inTurn));
    // And what running in turn means: the second close finds the incident closed, the later scans open a new one.
    expect(expected[4]).toMatchObject({ ok: false, problem: "conflict" });
    // Repeated duplicates confirm their incident without a new alert.
    expect((await outcome(inTurn)).map((i) => [i.state, i.alert_count])).toEqual([
      ["CLOSED", 1],
      ["OPEN", 1],
    ]);
  });
});

describe("AssetMonitor: one change, one alert", () => {
  /**
   * An asset trained on `clean` clean scans (8 unless said), and a way to apply the next ones
   * (optionally edited, or with no e-mail at all: `nullEmail`).
   */
  async function trained(clean = 8, nullEmail = false) {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    const start = Date.parse("2026-10-01T00:00:00Z");
    let n = 0;
    const apply = async (problem?: Problem, edit?: (p: ReturnType<typeof profileOf>) => void) => {
      n += 1;
      const profile = profileOf(n, problem, nullEmail);
      edit?.(profile);
      const time = new Date(start + n * 86_400_000).toISOString();
      return stub.applyScan({ asset, jobId: `job_one_${asset.id}_${n}`, createdAt: time, scanTime: time, profile });
    };
    for (let i = 0; i < clean; i++) expect((await apply()).alerts).toBe(0);
    return { asset, stub, apply, job: (k: number) => `job_one_${asset.id}_${k}` };
  }

  it("a persisting shift alerts once, is adopted after adapt_after scans (NEW_NORMAL), then is quiet", async () => {
    const { asset, apply } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    expect((await apply("row_drop")).alerts).toBe(0);
    let [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "OPEN", alert_count: 1, level_scans: 2 });
    // The third scan at the new level: adopted, the incident closes itself.
    expect((await apply("row_drop")).alerts).toBe(0);
    [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "CLOSED", close_reason: "NEW_NORMAL", alert_count: 1 });
    const last = (await historyOf(incident!.id)).at(-1)!;
    expect(last).toMatchObject({ from_state: "OPEN", to_state: "CLOSED", reason: "NEW_NORMAL", actor: "system" });
    const details = JSON.parse(last.details!);
    expect(details.band_before.high).toBeGreaterThan(900);
    expect(details.band_after.low).toBeLessThan(410);
    expect(details.band_after.high).toBeGreaterThan(390);
    // The new level is the baseline now: more scans at it are quiet, and no new incident opens.
    for (let i = 0; i < 3; i++) expect((await apply("row_drop")).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
  });

  it("an escalation (a band's width further) alerts again on the same incident", async () => {
    const { asset, apply } = await trained();
    await env.DB.prepare(
      "insert into asset_policies (asset_id, tenant_id, overrides, adapt_after, updated_at) values (?, ?, '{}', 5, ?)",
    )
      .bind(asset.id, asset.tenantId, new Date().toISOString())
      .run();
    expect((await apply("row_drop")).alerts).toBe(1);
    // Much further down than the first alert: an escalation, a second alert on the same incident.
    expect(
      (
        await apply("row_drop", (p) => {
          p.row_count = 20;
        })
      ).alerts,
    ).toBe(1);
    const [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "OPEN", alert_count: 2, level_scans: 1 });
    expect((await historyOf(incident!.id)).map((h) => JSON.parse(h.alert_refs).length)).toEqual([1, 1]);
  });

  it("a one-scan excursion that returns is not adopted", async () => {
    const { asset, stub, apply, job } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    expect((await apply()).alerts).toBe(0);
    const [incident] = await incidentsOf(asset);
    expect(incident).toMatchObject({ state: "OPEN", clean_scans: 1, level_scans: 0 });
    // The excursion's row count stays out of the baseline: the drop is still a drop.
    const excluded = await runInDurableObject(
      stub,
      (_i, state) =>
        state.storage.sql
          .exec<{ excluded: number }>(
            "select excluded from metric_points where job_id = ? and metric = 'row_count'",
            job(9),
          )
          .one().excluded,
    );
    expect(excluded).toBe(1);
    expect((await apply("row_drop")).alerts).toBe(0);
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "OPEN", level_scans: 1 });
  });

  it("closing as EXPECTED adopts the level at once", async () => {
    const { asset, stub, apply } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    const [incident] = await incidentsOf(asset);
    expect(
      await stub.setIncidentState({
        tenantId: asset.tenantId,
        incidentId: incident!.id,
        state: "CLOSED",
        reason: "EXPECTED",
        actor: "ada@example.com",
      }),
    ).toMatchObject({ ok: true });
    expect((await apply("row_drop")).alerts).toBe(0);
    expect((await apply("row_drop")).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
  });

  /** Closes the asset's only open incident by hand with `reason`. */
  async function closeOpen(asset: MonitoredAsset, stub: ReturnType<typeof assetMonitor>, reason: CloseReason) {
    const open = (await incidentsOf(asset)).filter((i) => i.state === "OPEN");
    expect(open).toHaveLength(1);
    const change = { tenantId: asset.tenantId, incidentId: open[0]!.id, actor: "ada@example.com" };
    expect(await stub.setIncidentState({ ...change, state: "CLOSED", reason })).toMatchObject({ ok: true });
  }
  const alertRows = (asset: MonitoredAsset) => keptAlerts<{ type: string; details: string }>(asset.tenantId, asset.id);

  it("EXPECTED answers a rule with no history yet: a column null since the first scan alerts once", async () => {
    const { asset, stub, apply } = await trained(0, true);
    expect((await apply()).alerts).toBe(1);
    await closeOpen(asset, stub, "EXPECTED");
    // Released, the one point is still less history than the rule needs: only the close answers.
    for (let i = 0; i < 3; i++) expect((await apply()).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
  });

  it("NEW_NORMAL answers too, where the adopted points are still too few for the rule", async () => {
    const { asset, apply } = await trained(0, true);
    await env.DB.prepare(`insert into asset_policies (asset_id, tenant_id, overrides, updated_at) values (?, ?, ?, ?)`)
      .bind(asset.id, asset.tenantId, JSON.stringify({ completeness: { params: { min_history: 10 } } }), "2026-10-01")
      .run();
    expect((await apply()).alerts).toBe(1);
    expect((await apply()).alerts).toBe(0);
    expect((await apply()).alerts).toBe(0);
    expect((await incidentsOf(asset))[0]).toMatchObject({ state: "CLOSED", close_reason: "NEW_NORMAL" });
    for (let i = 0; i < 3; i++) expect((await apply()).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
  });

  it("FALSE_POSITIVE accepts what was observed without moving the baseline; further alerts, saying so", async () => {
    const { asset, stub, apply } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    await closeOpen(asset, stub, "FALSE_POSITIVE");
    // The usual level stays usual (the baseline did not move to the drop), and the drop is accepted.
    expect((await apply()).alerts).toBe(0);
    expect((await apply("row_drop")).alerts).toBe(0);
    expect((await apply()).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
    // Clearly further than the accepted drop: an alert, whose details name the close it went beyond.
    expect(
      (
        await apply("row_drop", (p) => {
          p.row_count = 20;
        })
      ).alerts,
    ).toBe(1);
    const last = JSON.parse((await alertRows(asset)).at(-1)!.details);
    const accepted = JSON.parse((await alertRows(asset))[0]!.details);
    expect(last.after_close).toEqual({
      incident_id: expect.any(Number),
      reason: "FALSE_POSITIVE",
      closed_at: expect.any(String),
      accepted_deviation: accepted.deviation,
      accepted_observed: accepted.observed,
      band_at_close: accepted.expected,
    });
  });

  it("NO_ACTION_NEEDED accepts the observation: its points join the baseline and it does not alert again", async () => {
    const { asset, stub, apply, job } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    await closeOpen(asset, stub, "NO_ACTION_NEEDED");
    const excluded = await runInDurableObject(
      stub,
      (_i, state) =>
        state.storage.sql
          .exec<{ n: number }>("select count(*) as n from metric_points where job_id = ? and excluded = 1", job(9))
          .one().n,
    );
    expect(excluded).toBe(0);
    expect((await apply("row_drop")).alerts).toBe(0);
    expect((await apply()).alerts).toBe(0);
    expect(await incidentsOf(asset)).toHaveLength(1);
  });

  it("a reopened incident's close no longer answers its condition", async () => {
    const { asset, stub, apply } = await trained();
    expect((await apply("row_drop")).alerts).toBe(1);
    await closeOpen(asset, stub, "NO_ACTION_NEEDED");
    const [incident] = await incidentsOf(asset);
    const change = { tenantId: asset.tenantId, incidentId: incident!.id, actor: "ada@example.com" };
    expect(await stub.setIncidentState({ ...change, state: "OPEN" })).toMatchObject({ ok: true });
    expect(await stub.setIncidentState({ ...change, state: "CLOSED", reason: "FIXED" })).toMatchObject({ ok: true });
    // FIXED is no answer about the level: the drop coming back is news.
    expect((await apply("row_drop")).alerts).toBe(1);
  });
});

describe("AssetMonitor: attribute kinds", () => {
  it("stores each attribute's kind with the asset's attributes; a user's kind wins and changes the policies", async () => {
    const asset = await monitoredAsset();
    const stub = assetMonitor(env, asset.tenantId, asset.id);
    const time = new Date().toISOString();
    await stub.applyScan({
      asset,
      jobId: `job_kinds_${asset.id}_1`,
      createdAt: time,
      scanTime: time,
      profile: profileOf(1),
    });
    const stored = async () => {
      const [row] = await rows<{ attributes: string }>("select attributes from assets where id = ?", asset.id);
      return Object.fromEntries(
        (JSON.parse(row!.attributes) as Array<{ name: string; kind: string; kind_source: string }>).map((a) => [
          a.name,
          `${a.kind}/${a.kind_source}`,
        ]),
      );
    };
    expect(await stored()).toEqual({
      id: "identifier/inferred",
      email: "identifier/inferred",
      amount: "quantity/inferred",
      country: "code/inferred",
      updated_at: "timestamp/inferred",
    });
    await env.DB.prepare(
      `insert into asset_policies (asset_id, tenant_id, overrides, attribute_kinds, updated_at) values (?, ?, '{}', ?, ?)`,
    )
      .bind(asset.id, asset.tenantId, JSON.stringify({ amount: "code" }), time)
      .run();
    await stub.applyScan({
      asset,
      jobId: `job_kinds_${asset.id}_2`,
      createdAt: time,
      scanTime: time,
      profile: profileOf(2),
    });
    expect((await stored()).amount).toBe("code/user");
    // A code is not averaged: value_range no longer trains on amount.
    expect((await stub.training()).filter((t) => t.policy === "value_range")).toEqual([]);
  });
});
