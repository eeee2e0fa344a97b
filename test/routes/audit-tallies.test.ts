/**
 * Issue 38 (decision 0014): the audit log counts the data plane's requests a pipeline makes every
 * scan (uploads, scan triggers, a job's alerts) in one row per UTC day, method, path, actor,
 * credential and status, counted up in place, instead of a row per request; writes to the
 * configuration stay a row each. A refused request is counted apart with its status, and a request
 * whose queue refused its job is not counted as accepted.
 */
import { describe, expect, it } from "vitest";
import { DATA_PLANE } from "../../src/routes/audit/audit.middleware";
import { ADMIN_KEY, admin, type Credential, call } from "../support/api";
import { countRows, createAsset, csvAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { fetchWithRefusingQueue } from "../support/scans";
import { createTenant, tenantKey } from "../support/tenants";

const CSV = "id,amount\n1,10\n2,20\n";
const auditOf = (tenant: string, query = "") => call("GET", `/api/backend/${tenant}/audit${query}`, { as: admin });

function upload(tenant: string, assetId: number, as: Credential = admin, headers: Record<string, string> = {}) {
  return call("POST", `/v2/${tenant}/sources/${assetId}/batch_data`, {
    as,
    raw: CSV,
    headers: { "Content-Type": "text/csv", ...headers },
  });
}

/** The entries of uploads to an asset: its refused ones, by its path (decision 0015). */
const uploads = (entries: any[], assetId: number) =>
  entries.filter((e) => e.path.endsWith(`/sources/${assetId}/batch_data`));

/** The route-level tallies of accepted uploads (every asset's: decision 0015). */
const acceptedUploads = (entries: any[]) => entries.filter((e) => e.path.endsWith("/sources/:source_id/batch_data"));

/** An asset's upload entries: its refused ones and the accepted ones' route-level tallies. */
const uploadEntries = (entries: any[], assetId: number) =>
  entries.filter((e) => uploads([e], assetId).length > 0 || acceptedUploads([e]).length > 0);

describe("audit tallies of the data plane", () => {
  it("counts N uploads of an asset in a day in one row, and a refused upload apart with its status", async () => {
    const { tenant, asset } = await csvAsset();
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await upload(tenant, asset.id);
      expect(res.status).toBe(202);
      ids.push(res.headers.get("x-request-id")!);
    }
    for (let i = 0; i < 2; i++)
      expect((await upload(tenant, asset.id, admin, { "Content-Type": "text/xml" })).status).toBe(415);

    const rows = await countRows("audit_events", "tenant_id = ? and path like ?", tenant, "%/batch_data");
    expect(rows).toBe(2);
    const log = await auditOf(tenant);
    expect(log.status).toBe(200);
    const [refused, accepted] = uploadEntries(log.body, asset.id);
    expect(accepted).toMatchObject({
      method: "POST",
      route: "/v2/:tenant/sources/:source_id/batch_data",
      path: `/v2/${tenant}/sources/:source_id/batch_data`,
      status: 202,
      outcome: "success",
      count: 4,
      credential: "platform-admin",
      request_id: ids[3],
    });
    expect(accepted.last_at >= accepted.at).toBe(true);
    expect(accepted.last_at.slice(0, 10)).toBe(accepted.at.slice(0, 10));
    expect(refused).toMatchObject({
      status: 415,
      outcome: "failure",
      count: 2,
      path: `/v2/${tenant}/sources/${asset.id}/batch_data`,
    });
    // The refused ones came last, but the accepted tally came first and keeps its place (by id).
    expect(refused.id).toBeGreaterThan(accepted.id);
  });

  it("counts accepted uploads per route and credential, every asset's in one tally, and refused ones per asset", async () => {
    const { tenant, projectId, connectionId, asset } = await csvAsset();
    const other = await createAsset(tenant, projectId, connectionId, {
      type: "S3",
      payload: { path: "b/*.csv", format: "csv" },
    });
    const key = await tenantKey(tenant);
    for (const [assetId, as] of [
      [asset.id, admin],
      [asset.id, key],
      [asset.id, key],
      [other.id, key],
    ] as const) {
      expect((await upload(tenant, assetId, as)).status).toBe(202);
    }
    for (const assetId of [asset.id, other.id, other.id]) {
      expect((await upload(tenant, assetId, key, { "Content-Type": "text/xml" })).status).toBe(415);
    }
    const log = (await auditOf(tenant)).body;
    // Two assets, one tally per credential: the path names the route, not an asset.
    expect(
      acceptedUploads(log).map((e: any) => [
        e.credential.startsWith("api-key:") ? "key" : e.credential,
        e.path,
        e.status,
        e.count,
      ]),
    ).toEqual([
      ["key", `/v2/${tenant}/sources/:source_id/batch_data`, 202, 3],
      ["platform-admin", `/v2/${tenant}/sources/:source_id/batch_data`, 202, 1],
    ]);
    // A refused upload keeps its asset's path.
    expect(uploads(log, asset.id).map((e: any) => [e.status, e.count])).toEqual([[415, 1]]);
    expect(uploads(log, other.id).map((e: any) => [e.status, e.count])).toEqual([[415, 2]]);
    // Creating the second asset is a write to the configuration: a row of its own, count 1.
    const created = log.filter((e: any) => e.route.endsWith("/projects/:projectId/assets"));
    expect(created.map((e: any) => e.count)).toEqual([1, 1]);
    expect(created[0].last_at).toBe(created[0].at);
  });

  it("filters by path: an asset's own entries and the route-level tallies that may count it, nothing else", async () => {
    const { tenant, projectId, connectionId, asset } = await csvAsset();
    const other = await createAsset(tenant, projectId, connectionId, {
      type: "S3",
      payload: { path: "b/*.csv", format: "csv" },
    });
    for (const assetId of [asset.id, other.id]) {
      expect((await upload(tenant, assetId)).status).toBe(202);
      expect((await upload(tenant, assetId, admin, { "Content-Type": "text/xml" })).status).toBe(415);
    }
    const mine = `/v2/${tenant}/sources/${asset.id}/batch_data`;
    const byPath = await auditOf(tenant, `?path=${encodeURIComponent(mine)}`);
    expect(byPath.status).toBe(200);
    // The route-level tally comes with it, its path saying it names no asset: a filter by the
    // asset's path does not silently leave out the accepted uploads.
    expect(byPath.body.map((e: any) => [e.path, e.status, e.count])).toEqual([
      [mine, 415, 1],
      [`/v2/${tenant}/sources/:source_id/batch_data`, 202, 2],
    ]);
    // A write to the configuration matches its path exactly.
    const projects = `/api/backend/${tenant}/configuration/projects`;
    const created = (await auditOf(tenant, `?path=${encodeURIComponent(projects)}`)).body;
    expect(created.map((e: any) => [e.path, e.count])).toEqual([[projects, 1]]);
    expect((await auditOf(tenant, `?path=${encodeURIComponent(`/v2/${tenant}/sources/999999/scans`)}`)).body).toEqual(
      [],
    );
  });

  it("counts the scan trigger and the alerts of a job in tallies too", async () => {
    const tenant = await createTenant();
    const projectId = (await call("POST", `/api/backend/${tenant}/configuration/projects`, {
      as: admin,
      body: { name: "p" },
    }))!.body.id as number;
    const connectionId = await insertConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connectionId, {
      type: "S3",
      payload: { path: "in/*.csv", format: "csv" },
    });
    const other = await createAsset(tenant, projectId, connectionId, {
      type: "S3",
      payload: { path: "other/*.csv", format: "csv" },
    });
    const base = `/api/backend/${tenant}/configuration`;
    const jobs: Array<[number, string]> = [];
    for (const assetId of [asset.id, asset.id, other.id]) {
      const res = await call("POST", `${base}/assets/${assetId}/scans`, { as: admin });
      expect(res.status).toBe(202);
      jobs.push([assetId, res.body.job_id]);
    }
    for (const [assetId, job] of jobs) {
      expect((await call("POST", `${base}/sources/${assetId}/alerts?job_id=${job}`, { as: admin })).status).toBe(200);
    }
    const byFilters = await call("POST", `${base}/alerts/by_filters`, {
      as: admin,
      body: { asset_id: String(asset.id), alert_refs: [1] },
    });
    expect(byFilters.status).toBe(200);
    const log = (await auditOf(tenant)).body;
    const count = (suffix: string) => log.filter((e: any) => e.path.endsWith(suffix)).map((e: any) => e.count);
    // Two assets' accepted requests, one tally per route (decision 0015).
    expect(count(`${base}/assets/:assetId/scans`)).toEqual([3]);
    expect(count(`${base}/sources/:sourceID/alerts`)).toEqual([3]);
    expect(count(`/assets/${asset.id}/scans`)).toEqual([]);
    expect(count("/alerts/by_filters")).toEqual([1]);
  });

  it("filters tallies by outcome, actor and method, by the span's overlap with the time filters, and pages by a key that does not move", async () => {
    const { tenant, asset } = await csvAsset();
    const key = await tenantKey(tenant);
    expect((await upload(tenant, asset.id, key)).status).toBe(202);
    const first = acceptedUploads((await auditOf(tenant)).body)[0];
    await new Promise((r) => setTimeout(r, 20));
    expect((await upload(tenant, asset.id, key)).status).toBe(202);
    expect((await upload(tenant, asset.id, key, { "Content-Type": "text/xml" })).status).toBe(415);
    // Three writes to the configuration after the tally's first request.
    for (let i = 0; i < 3; i++) {
      const res = await call("POST", `/api/backend/${tenant}/configuration/projects`, {
        as: admin,
        body: { name: `p${i}` },
      });
      expect(res.status).toBe(201);
    }

    const failures = (await auditOf(tenant, "?outcome=failure")).body;
    expect(failures.map((e: any) => [e.status, e.count])).toEqual([[415, 1]]);
    const byKey = (await auditOf(tenant, `?actor=${encodeURIComponent(first.actor)}&method=POST&outcome=success`)).body;
    expect(acceptedUploads(byKey).map((e: any) => e.count)).toEqual([2]);

    const accepted = acceptedUploads((await auditOf(tenant, "?outcome=success")).body)[0];
    expect(accepted.count).toBe(2);
    expect(accepted.last_at > accepted.at).toBe(true);
    // A from_time after the first request but not after the last still finds the tally (its span overlaps).
    const after = (await auditOf(tenant, `?outcome=success&from_time=${encodeURIComponent(accepted.last_at)}`)).body;
    expect(acceptedUploads(after).map((e: any) => e.count)).toEqual([2]);
    const later = new Date(Date.parse(accepted.last_at) + 1).toISOString();
    expect(
      acceptedUploads((await auditOf(tenant, `?outcome=success&from_time=${encodeURIComponent(later)}`)).body),
    ).toEqual([]);
    const before = new Date(Date.parse(accepted.at) - 1).toISOString();
    expect(acceptedUploads((await auditOf(tenant, `?to_time=${encodeURIComponent(before)}`)).body)).toEqual([]);
    expect(acceptedUploads((await auditOf(tenant, `?to_time=${encodeURIComponent(accepted.at)}`)).body)).toHaveLength(
      1,
    );

    // Paging: the first page ends before the tally; the tally is counted up meanwhile; the next page
    // still holds it, once, with its new count, and no entry shows twice.
    const page1 = await auditOf(tenant, "?limit=3");
    expect(page1.body).toHaveLength(3);
    expect(page1.body.map((e: any) => e.id)).not.toContain(accepted.id);
    expect((await upload(tenant, asset.id, key)).status).toBe(202);
    const seen = [...page1.body];
    let next = /<([^>]+)>; rel="next"/.exec(page1.headers.get("link") ?? "")?.[1];
    while (next) {
      const page = await call("GET", next, { as: admin });
      seen.push(...page.body);
      next = /<([^>]+)>; rel="next"/.exec(page.headers.get("link") ?? "")?.[1];
    }
    const ids = seen.map((e: any) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    expect(seen.find((e: any) => e.id === accepted.id)?.count).toBe(3);
  });

  it("keeps each tenant's tallies to itself", async () => {
    const a = await csvAsset();
    const b = await csvAsset();
    for (let i = 0; i < 3; i++) expect((await upload(a.tenant, a.asset.id)).status).toBe(202);
    expect((await upload(b.tenant, b.asset.id)).status).toBe(202);
    // Another tenant's asset through this tenant's path is a 404: nothing recorded, nothing counted.
    expect((await upload(b.tenant, a.asset.id)).status).toBe(404);
    const logA = (await auditOf(a.tenant)).body;
    const logB = (await auditOf(b.tenant)).body;
    expect(acceptedUploads(logA).map((e: any) => e.count)).toEqual([3]);
    expect(acceptedUploads(logB).map((e: any) => e.count)).toEqual([1]);
    expect(uploads(logB, a.asset.id)).toEqual([]);
    expect(JSON.stringify(logB)).not.toContain(a.tenant);
  });

  it("does not count a request whose queue refused the job as accepted: it is counted with the answer it got", async () => {
    const { tenant, asset } = await csvAsset();
    expect((await upload(tenant, asset.id)).status).toBe(202);
    const failed = await fetchWithRefusingQueue(`/v2/${tenant}/sources/${asset.id}/batch_data`, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "text/csv", "Content-Length": String(CSV.length) },
      body: CSV,
    });
    expect(failed.status).toBe(503);
    const log = (await auditOf(tenant)).body;
    expect(uploadEntries(log, asset.id).map((e: any) => [e.path, e.status, e.count])).toEqual([
      [`/v2/${tenant}/sources/${asset.id}/batch_data`, 503, 1],
      [`/v2/${tenant}/sources/:source_id/batch_data`, 202, 1],
    ]);

    // A scan trigger (the JSON path, whose batch records it before the send) and a first request of
    // its tally: the tally it was counted in goes, and only the answer given is left.
    const trigger = await fetchWithRefusingQueue(`/api/backend/${tenant}/configuration/assets/${asset.id}/scans`, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "application/json" },
      body: "{}",
    });
    expect(trigger.status).toBe(503);
    const scans = (await auditOf(tenant)).body.filter((e: any) => e.path.endsWith(`/assets/${asset.id}/scans`));
    expect(scans.map((e: any) => [e.status, e.count, e.request_id])).toEqual([
      [503, 1, trigger.headers.get("x-request-id")],
    ]);
  });

  it("names only routes that exist, as POST", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    for (const entry of DATA_PLANE) {
      const [method, route] = entry.split(" ");
      const template = route!.replace(/:([A-Za-z_]+)/g, "{$1}");
      expect(doc.paths[template]?.[method!.toLowerCase()], entry).toBeDefined();
    }
  });
});
