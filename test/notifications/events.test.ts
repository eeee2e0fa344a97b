/**
 * Incident events through the real pipeline (upload → scan queue → AssetMonitor → notifications
 * queue → receiver): one message per incident event, never per repeated alert; the channel's
 * events, min_severity and project_ids filters; muting per asset and per policy; scan.failed.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { createProject } from "../support/projects";
import { receiver, type SeenRequest } from "../support/receivers";
import { emailBatch as batch, scanJob, uploadCsv } from "../support/scans";
import { unique } from "../support/unique";

async function scan(tenant: string, assetId: number, csv: string) {
  const jobId = await uploadCsv(tenant, assetId, csv);
  expect(await scanJob(tenant, assetId, jobId)).toMatchObject({ status: "SUCCEEDED" });
  return jobId;
}

async function channel(tenant: string, body: Record<string, unknown>) {
  const r = await receiver();
  const res = await call("POST", `/api/backend/${tenant}/configuration/notifications/channels`, {
    as: admin,
    body: { name: unique("ch"), type: "WEBHOOK", url: r.url, ...body },
  });
  expect(res.status).toBe(201);
  await r.trust(res.body.secret);
  return { ...r, id: res.body.id as number };
}

/** An asset with five clean batches of history, and a webhook channel with the given settings. */
async function world(channelBody: Record<string, unknown> = {}) {
  const { tenant, asset, projectId } = await csvAsset();
  for (let seq = 1; seq <= 5; seq++) await scan(tenant, asset.id, batch(seq));
  const hook = await channel(tenant, channelBody);
  return { tenant, assetId: asset.id as number, projectId, hook };
}

const events = (seen: SeenRequest[]) => seen.map((s) => JSON.parse(s.body) as { type: string; data: any });

/** Waits until the receiver has `n` requests and a moment more (a late extra one would show). */
async function received(hook: { requests: () => Promise<SeenRequest[]> }, n: number): Promise<SeenRequest[]> {
  await vi.waitFor(async () => expect((await hook.requests()).length).toBeGreaterThanOrEqual(n), {
    timeout: 15_000,
    interval: 50,
  });
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return hook.requests();
}

describe("incident events", { timeout: 120_000 }, () => {
  it("one message per incident event: opened once, nothing for repeats, closed once", async () => {
    const { tenant, assetId, hook } = await world({
      events: ["incident.opened", "incident.escalated", "incident.closed"],
    });
    const jobId = await scan(tenant, assetId, batch(6, 60));
    const [opened] = await received(hook, 1);
    expect(opened!.verified).toBe(true);
    const body = JSON.parse(opened!.body);
    expect(body.type).toBe("incident.opened");
    expect(body.data.asset).toEqual({ id: String(assetId), name: expect.any(String), project_id: expect.any(Number) });
    expect(body.data.incident).toMatchObject({ alert_policy_id: "completeness", attribute: "email", state: "OPEN" });
    expect(body.data.alerts).toHaveLength(1);
    expect(body.data.alerts[0]).toMatchObject({ job_id: jobId, type: "completeness", is_notification_enabled: true });
    expect(body.data.alerts[0].details).toHaveProperty("observed");
    expect(body.data.link).toBe(`http://localhost:8787/api/backend/${tenant}/incidents/${body.data.incident.id}`);

    // The same problem again: the incident records the scan, no message.
    await scan(tenant, assetId, batch(7, 60));
    expect(events(await received(hook, 1))).toHaveLength(1);

    const closed = await call("PATCH", `/api/backend/${tenant}/incidents/${body.data.incident.id}`, {
      as: admin,
      body: { state: "CLOSED", reason: "FIXED" },
    });
    expect(closed.status).toBe(200);
    const all = events(await received(hook, 2));
    expect(all.map((e) => e.type)).toEqual(["incident.opened", "incident.closed"]);
    expect(all[1]!.data).toMatchObject({
      closed_by: "platform-admin",
      incident: { state: "CLOSED", close_reason: "FIXED" },
    });

    // Each message has its own webhook-id; the log has both, DELIVERED.
    const seen = await hook.requests();
    expect(new Set(seen.map((s) => s.headers["webhook-id"])).size).toBe(2);
    const log = await call("GET", `/api/backend/${tenant}/configuration/notifications/channels/${hook.id}/deliveries`, {
      as: admin,
    });
    expect(log.body.map((d: { event: string; status: string }) => [d.event, d.status])).toEqual([
      ["incident.closed", "DELIVERED"],
      ["incident.opened", "DELIVERED"],
    ]);
  });

  it("an escalation is a message of its own", async () => {
    const { tenant, assetId, hook } = await world();
    await scan(tenant, assetId, batch(6, 20));
    await received(hook, 1);
    await scan(tenant, assetId, batch(7, 190));
    const all = events(await received(hook, 2));
    expect(all.map((e) => e.type)).toEqual(["incident.opened", "incident.escalated"]);
    expect(all[1]!.data.incident.id).toBe(all[0]!.data.incident.id);
  });

  it("filters by events, min_severity and project_ids", async () => {
    const { tenant, assetId, projectId, hook } = await world();
    const closedOnly = await channel(tenant, { events: ["incident.closed"] });
    const highOnly = await channel(tenant, { min_severity: "HIGH" });
    const otherProject = await channel(tenant, { project_ids: [await createProject(tenant)] });
    const thisProject = await channel(tenant, { project_ids: [projectId] });
    await scan(tenant, assetId, batch(6, 60));
    await received(hook, 1);
    await received(thisProject, 1);
    const severity = (await env.DB.prepare("select severity from incidents where asset_id = ?")
      .bind(assetId)
      .first<{ severity: string }>())!.severity;
    expect(await closedOnly.requests()).toEqual([]);
    expect(await otherProject.requests()).toEqual([]);
    expect((await highOnly.requests()).length).toBe(severity === "HIGH" ? 1 : 0);
  });

  it("muted per asset or per policy: no message, and the alert says is_notification_enabled: false", async () => {
    const { tenant, assetId, hook } = await world();
    const policies = `/api/backend/${tenant}/configuration/assets/${assetId}/policies`;
    const put = await call("PUT", policies, { as: admin, body: { overrides: { completeness: { notify: false } } } });
    expect(put.status).toBe(200);
    expect(put.body.notify).toBe(true);
    expect(put.body.policies.find((p: { id: string }) => p.id === "completeness").notify).toBe(false);
    const jobId = await scan(tenant, assetId, batch(6, 60));
    const alerts = await call(
      "POST",
      `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`,
      {
        as: admin,
      },
    );
    expect(alerts.body.length).toBeGreaterThan(0);
    expect(alerts.body.every((a: { is_notification_enabled: boolean }) => a.is_notification_enabled === false)).toBe(
      true,
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await hook.requests()).toEqual([]);

    // The whole asset muted: even another policy's problem sends nothing.
    const muted = await call("PUT", policies, { as: admin, body: { overrides: {}, notify: false } });
    expect(muted.body.notify).toBe(false);
    expect(muted.body.policies.every((p: { notify: boolean }) => p.notify === false)).toBe(true);
    const loud = await scan(tenant, assetId, batch(7, 190));
    const raised = await call("POST", `/api/backend/${tenant}/configuration/sources/${assetId}/alerts?job_id=${loud}`, {
      as: admin,
    });
    expect(raised.body.length).toBeGreaterThan(0);
    expect(raised.body.every((a: { is_notification_enabled: boolean }) => !a.is_notification_enabled)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(await hook.requests()).toEqual([]);
  });

  it("scan.failed goes to the channels that ask for it", async () => {
    const { tenant, asset } = await csvAsset();
    const hook = await channel(tenant, { events: ["scan.failed"] });
    const quiet = await channel(tenant, {});
    // A CSV wider than an asset may be: the scan fails as the user's input.
    const csv = `${Array.from({ length: 2001 }, (_, i) => `c${i}`).join(",")}\n${"1,".repeat(2000)}1\n`;
    const jobId = await uploadCsv(tenant, asset.id, csv);
    expect(await scanJob(tenant, asset.id, jobId)).toMatchObject({ status: "FAILED" });
    const [failed] = events(await received(hook, 1));
    expect(failed).toMatchObject({
      type: "scan.failed",
      data: { job: { id: jobId, status: "FAILED" }, asset: { id: String(asset.id) } },
    });
    expect(failed!.data.job.error).toMatch(/more than 2000 attributes/);
    expect(await quiet.requests()).toEqual([]);
  });
});
