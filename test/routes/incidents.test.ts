import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { seedAlert } from "../support/alerts";
import { type ApiResponse, admin, call } from "../support/api";
import { type AssetRef, seedAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { seedHistory, seedIncident } from "../support/incidents";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantKey } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const H = 3_600_000;
const at = (iso: string, plusHours = 0) => new Date(Date.parse(iso) + plusHours * H).toISOString();

describeAuthMatrix(
  "incidents",
  async (w) => {
    const asset = await seedAsset(w.tenant, w.projectId);
    const alertId = await seedAlert(asset);
    const incidentId = await seedIncident(asset);
    return { asset, alertId, incidentId };
  },
  [
    { method: "GET", path: (w) => `/api/backend/${w.tenant}/incidents`, role: "TENANT_MEMBER" },
    { method: "GET", path: (w) => `/api/backend/${w.tenant}/incidents/distribution`, role: "TENANT_MEMBER" },
    { method: "GET", path: (w) => `/api/backend/${w.tenant}/incidents/summary`, role: "TENANT_MEMBER" },
    { method: "GET", path: (w, x) => `/api/backend/${w.tenant}/incidents/${x.incidentId}`, role: "PROJECT_VIEWER" },
    {
      method: "PATCH",
      path: (w, x) => `/api/backend/${w.tenant}/incidents/${x.incidentId}`,
      body: () => ({ state: "CLOSED", reason: "FIXED" }),
      role: "PROJECT_EDITOR",
    },
    {
      method: "POST",
      path: (w) => `/api/backend/${w.tenant}/configuration/alerts/by_filters`,
      body: (_w, x) => ({ asset_id: String(x.asset.assetId), alert_refs: [x.alertId] }),
      role: "PROJECT_VIEWER",
    },
    { method: "POST", path: (w) => `/api/backend/${w.tenant}/incidents/historical`, role: "TENANT_ADMIN" },
    { method: "GET", path: (w) => `/api/backend/${w.tenant}/incidents/historical/nosuchjob`, role: "TENANT_ADMIN" },
  ],
);

const list = (tenant: string, query = "", as = admin) =>
  call("GET", `/api/backend/${tenant}/incidents${query}`, { as });
const ids = (body: Array<{ id: number }>) => body.map((i) => i.id).sort((a, b) => a - b);

describe("GET /api/backend/{tenant}/incidents: filters", () => {
  let tenant: string;
  let a: AssetRef;
  let b: AssetRef;
  const n: Record<string, number> = {};

  beforeAll(async () => {
    tenant = await createTenant();
    a = await seedAsset(tenant, await createProject(tenant));
    b = await seedAsset(tenant, await createProject(tenant));
    n.aHigh = await seedIncident(a, {
      severity: "HIGH",
      impact: "LOW",
      openedAt: "2026-03-01T10:00:00.000Z",
      sourceName: "Orders_Daily",
      policy: "freshness",
      policyName: "Freshness",
      tag: "timeliness",
    });
    n.aLow = await seedIncident(a, {
      severity: "LOW",
      impact: "HIGH",
      openedAt: "2026-03-05T10:00:00.000Z",
      sourceName: "orders 100% done",
      attribute: "email",
    });
    n.bMed = await seedIncident(b, {
      severity: "MEDIUM",
      impact: "MEDIUM",
      openedAt: "2026-03-09T10:00:00.000Z",
      connectionType: "SNOWFLAKE",
      sourceName: "customers",
      policy: "uniqueness",
      policyName: "Uniqueness of ids",
      tag: "consistency",
    });
    n.bOld = await seedIncident(b, {
      openedAt: "2026-02-01T00:00:00.000Z",
      state: "CLOSED",
      closedAt: "2026-02-02T00:00:00.000Z",
      closeReason: "FIXED",
      sourceName: "orders100ab done",
      attribute: "id",
    });
  });

  it("lists every incident, newest first, with the documented fields", async () => {
    const res = await list(tenant);
    expect(res.status).toBe(200);
    expect(res.body.map((i: { id: number }) => i.id)).toEqual([n.bMed, n.aLow, n.aHigh, n.bOld]);
    expect(res.body[1]).toEqual({
      id: n.aLow,
      asset_id: String(a.assetId),
      project_id: a.projectId,
      connection_id: a.connectionId,
      connection_type: "S3",
      source_name: "orders 100% done",
      alert_policy_id: "completeness",
      policy_name: "Completeness",
      attribute: "email",
      segment: null,
      state: "OPEN",
      severity: "LOW",
      impact: "HIGH",
      tag: "completeness",
      alert_count: 1,
      clean_scans: 0,
      level_scans: 1,
      opened_at: "2026-03-05T10:00:00.000Z",
      last_alert_at: "2026-03-05T10:00:00.000Z",
      closed_at: null,
      close_reason: null,
      first_response_at: null,
      ticket: null,
    });
  });

  it("text_to_search finds an incident by its asset's current name (issue 10, point 9)", async () => {
    const renamed = unique("renamed-orders");
    await env.DB.prepare("update assets set name = ? where id = ?").bind(renamed, a.assetId).run();
    const res = await list(tenant, `?text_to_search=${renamed}`);
    expect(res.body.map((i: { id: number }) => i.id).sort()).toEqual([n.aHigh, n.aLow].sort());
  });

  it("filters by each parameter, and by several at once", async () => {
    const cases: Array<[string, number[]]> = [
      [`?project_ids=${a.projectId}`, [n.aHigh!, n.aLow!]],
      [`?project_ids=${a.projectId},${b.projectId}`, [n.aHigh!, n.aLow!, n.bMed!, n.bOld!]],
      ["?connection_types=SNOWFLAKE", [n.bMed!]],
      ["?connection_types=S3,SNOWFLAKE", [n.aHigh!, n.aLow!, n.bMed!, n.bOld!]],
      ["?alert_policy_ids=freshness,uniqueness", [n.aHigh!, n.bMed!]],
      ["?severities=HIGH", [n.aHigh!]],
      ["?severities=LOW,MEDIUM", [n.aLow!, n.bMed!, n.bOld!]],
      ["?impacts=HIGH", [n.aLow!]],
      [`?connection_ids=${b.connectionId}`, [n.bMed!, n.bOld!]],
      ["?from_time=2026-03-05T10:00:00Z", [n.aLow!, n.bMed!]],
      ["?to_time=2026-03-05T10:00:00Z", [n.aHigh!, n.bOld!]],
      ["?from_time=2026-03-01&to_time=2026-03-06", [n.aHigh!, n.aLow!]],
      ["?from_time=2026-03-05T11:00:00%2B01:00", [n.aLow!, n.bMed!]],
      ["?text_to_search=ORDERS", [n.aHigh!, n.aLow!, n.bOld!]],
      ["?text_to_search=of%20ids", [n.bMed!]],
      ["?text_to_search=100%25", [n.aLow!]],
      ["?text_to_search=s_d", [n.aHigh!]],
      [`?project_ids=${a.projectId}&severities=LOW&text_to_search=orders`, [n.aLow!]],
      [`?project_ids=${b.projectId}&impacts=HIGH`, []],
    ];
    for (const [query, expected] of cases) {
      const res = await list(tenant, query);
      expect(res.status, query).toBe(200);
      expect(ids(res.body), query).toEqual([...expected].sort((x, y) => x - y));
    }
  });

  it("the list alone narrows by asset and by state (a pipeline gate asks for its asset's open incidents)", async () => {
    const cases: Array<[string, number[]]> = [
      [`?asset_ids=${a.assetId}`, [n.aHigh!, n.aLow!]],
      [`?asset_ids=${b.assetId}&states=OPEN`, [n.bMed!]],
      ["?states=CLOSED", [n.bOld!]],
      [`?asset_ids=${a.assetId},${b.assetId}&states=OPEN&severities=MEDIUM,HIGH`, [n.aHigh!, n.bMed!]],
    ];
    for (const [query, expected] of cases) {
      const res = await list(tenant, query);
      expect(res.status, query).toBe(200);
      expect(ids(res.body), query).toEqual([...expected].sort((x, y) => x - y));
    }
    for (const [query, path] of [
      ["?states=RESOLVED", "query.states.0"],
      ["?asset_ids=x", "query.asset_ids.0"],
    ]) {
      const res = await list(tenant, query!);
      expect(res.status, query).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
    // The summary and the distribution keep spec 4.8's filters: an asset filter there is not read.
    const summary = await call(
      "GET",
      `/api/backend/${tenant}/incidents/summary?from_time=2026-01-01&asset_ids=${a.assetId}`,
      {
        as: admin,
      },
    );
    expect(summary.status).toBe(200);
    expect(summary.body.total).toBe(4);
  });

  it("rejects invalid filters with a 400 naming the parameter", async () => {
    const cases: Array<[string, string]> = [
      ["?project_ids=1,x", "query.project_ids.1"],
      ["?project_ids=", "query.project_ids"],
      ["?connection_types=FTP", "query.connection_types.0"],
      ["?alert_policy_ids=made_up", "query.alert_policy_ids.0"],
      ["?severities=URGENT", "query.severities.0"],
      ["?impacts=low", "query.impacts.0"],
      ["?connection_ids=-3", "query.connection_ids.0"],
      ["?from_time=yesterday", "query.from_time"],
      ["?to_time=2026-13-01", "query.to_time"],
      ["?from_time=2026-03-02&to_time=2026-03-01", "query.to_time"],
      ["?limit=0", "query.limit"],
      ["?cursor=bm90LWEtY3Vyc29y", "query.cursor"],
    ];
    for (const [query, path] of cases) {
      const res = await list(tenant, query);
      expect(res.status, query).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        query,
      ).toContain(path);
    }
  });

  it("pages with limit and cursor through the Link header, newest first, each incident once", async () => {
    const seen: number[] = [];
    let path: string | undefined = `/api/backend/${tenant}/incidents?limit=1&severities=LOW,MEDIUM,HIGH`;
    let pages = 0;
    while (path) {
      const res: ApiResponse = await call("GET", path, { as: admin });
      expect(res.status).toBe(200);
      expect(res.body.length).toBeLessThanOrEqual(1);
      seen.push(...res.body.map((i: { id: number }) => i.id));
      pages += 1;
      path = res.headers.get("link")?.match(/<([^>]+)>; rel="next"/)?.[1];
      if (path) expect(path).toContain("severities=LOW%2CMEDIUM%2CHIGH");
    }
    expect(seen).toEqual([n.bMed, n.aLow, n.aHigh, n.bOld]);
    expect(pages).toBe(4);
  });

  it("breaks ties of opened_at by id, descending, across pages", async () => {
    const t = await createTenant();
    const asset = await seedAsset(t, await createProject(t));
    const same = [];
    for (let i = 0; i < 5; i++) same.push(await seedIncident(asset, { openedAt: "2026-01-01T00:00:00.000Z" }));
    const first = await list(t, "?limit=2");
    const next = first.headers.get("link")!.match(/<([^>]+)>/)![1]!;
    const second = await call("GET", next, { as: admin });
    const third = await call("GET", second.headers.get("link")!.match(/<([^>]+)>/)![1]!, { as: admin });
    expect(third.headers.get("link")).toBeNull();
    expect([...first.body, ...second.body, ...third.body].map((i: { id: number }) => i.id)).toEqual(same.reverse());
  });
});

describe("incidents: isolation between projects and tenants", () => {
  let tenant: string;
  let a: AssetRef;
  let b: AssetRef;
  let incidentA: number;
  let incidentB: number;
  let alertB: number;
  let viewerOfA: { token: string };

  beforeAll(async () => {
    tenant = await createTenant();
    a = await seedAsset(tenant, await createProject(tenant));
    b = await seedAsset(tenant, await createProject(tenant));
    incidentA = await seedIncident(a, { openedAt: at(new Date().toISOString(), -2), tag: "completeness" });
    incidentB = await seedIncident(b, { openedAt: at(new Date().toISOString(), -1), tag: "accuracy" });
    alertB = await seedAlert(b);
    const email = `${unique("viewer")}@example.com`;
    await projectMember(tenant, a.projectId, email, "PROJECT_VIEWER");
    viewerOfA = await userToken(email);
  });

  it("a member of project A sees A's incidents only, in the list, summary and distribution", async () => {
    const res = await list(tenant, "", viewerOfA);
    expect(ids(res.body)).toEqual([incidentA]);
    const asking = await list(tenant, `?project_ids=${b.projectId}`, viewerOfA);
    expect(asking.body).toEqual([]);
    const summary = await call("GET", `/api/backend/${tenant}/incidents/summary`, { as: viewerOfA });
    expect(summary.body).toMatchObject({ total: 1, open: 1, open_by_tag: { completeness: 1 } });
    const dist = await call("GET", `/api/backend/${tenant}/incidents/distribution`, { as: viewerOfA });
    expect(dist.body.days.reduce((s: number, d: { total: number }) => s + d.total, 0)).toBe(1);
    expect((await call("GET", `/api/backend/${tenant}/incidents/summary`, { as: admin })).body.total).toBe(2);
  });

  it("project B's incident, its alerts and its tickets are 404 to a member of A", async () => {
    for (const [method, path, body] of [
      ["GET", `/api/backend/${tenant}/incidents/${incidentB}`, undefined],
      ["PATCH", `/api/backend/${tenant}/incidents/${incidentB}`, { state: "CLOSED", reason: "FIXED" }],
      ["GET", `/api/backend/${tenant}/incidents/${incidentB}/tickets`, undefined],
      ["POST", `/api/backend/${tenant}/incidents/${incidentB}/tickets`, { template_id: 1 }],
      [
        "POST",
        `/api/backend/${tenant}/configuration/alerts/by_filters`,
        { asset_id: String(b.assetId), alert_refs: [alertB] },
      ],
    ] as const) {
      const res = await call(method, path, { as: viewerOfA, body });
      expect(res.status, `${method} ${path}`).toBe(404);
    }
    const own = await call("GET", `/api/backend/${tenant}/incidents/${incidentA}`, { as: viewerOfA });
    expect(own.status).toBe(200);
  });

  it("another tenant never sees them: 404 for its key, and its own lists are empty", async () => {
    const other = await createTenant();
    const key = await tenantKey(other);
    expect((await call("GET", `/api/backend/${tenant}/incidents`, { as: key })).status).toBe(404);
    expect((await call("GET", `/api/backend/${tenant}/incidents/${incidentA}`, { as: key })).status).toBe(404);
    // Asked through its own tenant, an incident id of another tenant is unknown.
    expect((await call("GET", `/api/backend/${other}/incidents/${incidentA}`, { as: key })).status).toBe(404);
    expect((await call("GET", `/api/backend/${other}/incidents`, { as: key })).body).toEqual([]);
    const res = await call("POST", `/api/backend/${other}/configuration/alerts/by_filters`, {
      as: key,
      body: { asset_id: String(b.assetId), alert_refs: [alertB] },
    });
    expect(res.status).toBe(404);
  });
});

describe("GET /api/backend/{tenant}/incidents/distribution", () => {
  it("counts incidents opened per UTC day by severity and impact, every day present", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    await seedIncident(asset, { openedAt: "2026-03-01T00:00:00.000Z", severity: "HIGH", impact: "LOW" });
    await seedIncident(asset, { openedAt: "2026-03-01T23:59:59.999Z", severity: "HIGH", impact: "MEDIUM" });
    await seedIncident(asset, { openedAt: "2026-03-03T12:00:00.000Z", severity: "LOW", impact: "LOW" });
    await seedIncident(asset, { openedAt: "2026-03-05T00:00:00.000Z", severity: "LOW", impact: "LOW" });
    const res = await call(
      "GET",
      `/api/backend/${tenant}/incidents/distribution?from_time=2026-03-01T00:00:00Z&to_time=2026-03-05T00:00:00Z`,
      { as: admin },
    );
    expect(res.status).toBe(200);
    const zero = { LOW: 0, MEDIUM: 0, HIGH: 0 };
    expect(res.body).toEqual({
      from_time: "2026-03-01T00:00:00.000Z",
      to_time: "2026-03-05T00:00:00.000Z",
      levels: ["LOW", "MEDIUM", "HIGH"],
      days: [
        { date: "2026-03-01", total: 2, by_severity: { ...zero, HIGH: 2 }, by_impact: { ...zero, LOW: 1, MEDIUM: 1 } },
        { date: "2026-03-02", total: 0, by_severity: zero, by_impact: zero },
        { date: "2026-03-03", total: 1, by_severity: { ...zero, LOW: 1 }, by_impact: { ...zero, LOW: 1 } },
        { date: "2026-03-04", total: 0, by_severity: zero, by_impact: zero },
      ],
    });
    const high = await call(
      "GET",
      `/api/backend/${tenant}/incidents/distribution?from_time=2026-03-01&to_time=2026-03-06&severities=LOW`,
      { as: admin },
    );
    expect(high.body.days.map((d: { total: number }) => d.total)).toEqual([0, 0, 1, 0, 1]);
  });

  it("defaults to the last 30 days, and refuses a range of more than two years", async () => {
    const tenant = await createTenant();
    const res = await call("GET", `/api/backend/${tenant}/incidents/distribution`, { as: admin });
    expect(res.status).toBe(200);
    const from = Date.parse(res.body.from_time);
    const to = Date.parse(res.body.to_time);
    expect(to - from).toBe(30 * 24 * H);
    const day = 24 * H;
    expect(res.body.days).toHaveLength(Math.floor((to - 1) / day) - Math.floor(from / day) + 1);
    expect(res.body.days.at(-1).date).toBe(new Date(to - 1).toISOString().slice(0, 10));
    const long = await call(
      "GET",
      `/api/backend/${tenant}/incidents/distribution?from_time=2020-01-01&to_time=2026-01-01`,
      { as: admin },
    );
    expect(long.status).toBe(400);
    expect(long.body.errors[0].path).toBe("query.from_time");
  });
});

describe("GET /api/backend/{tenant}/incidents/summary", () => {
  it("computes totals, MTTR over the range and the one before, first response and tags", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const closed = (openedAt: string, hours: number, tag: string, firstResponseHours?: number) =>
      seedIncident(asset, {
        openedAt,
        state: "CLOSED",
        closedAt: at(openedAt, hours),
        closeReason: "FIXED",
        tag,
        ...(firstResponseHours !== undefined ? { firstResponseAt: at(openedAt, firstResponseHours) } : {}),
      });
    // Range [03-01, 03-11): closed after 2, 4 and 9 hours (mean 5), first responses after 1 and 3 (mean 2).
    await closed("2026-03-01T00:00:00.000Z", 2, "completeness", 1);
    await closed("2026-03-04T06:00:00.000Z", 4, "completeness", 3);
    await closed("2026-03-10T23:00:00.000Z", 9, "accuracy");
    await seedIncident(asset, { openedAt: "2026-03-05T00:00:00.000Z", tag: "accuracy" });
    await seedIncident(asset, { openedAt: "2026-03-06T00:00:00.000Z", tag: "timeliness" });
    // The range before, [02-19, 03-01): 10 and 21 hours (mean 15.5, rounded to 16).
    await closed("2026-02-19T00:00:00.000Z", 10, "completeness");
    await closed("2026-02-28T23:59:59.000Z", 21, "completeness");
    // Outside both.
    await closed("2026-02-18T23:00:00.000Z", 100, "completeness");
    await seedIncident(asset, { openedAt: "2026-03-11T00:00:00.000Z" });

    const res = await call(
      "GET",
      `/api/backend/${tenant}/incidents/summary?from_time=2026-03-01T00:00:00Z&to_time=2026-03-11T00:00:00Z`,
      { as: admin },
    );
    expect(res.status).toBe(200);
    // open counts what is open now: the incident opened on 03-11, after the range, too.
    expect(res.body).toEqual({
      from_time: "2026-03-01T00:00:00.000Z",
      to_time: "2026-03-11T00:00:00.000Z",
      total: 5,
      open: 3,
      closed: 3,
      resolved: 3,
      mean_time_to_resolve: 5,
      previous_mean_time_to_resolve: 16,
      mean_time_to_first_response: 2,
      open_by_tag: { accuracy: 1, timeliness: 1, completeness: 1 },
      closed_by_tag: { completeness: 2, accuracy: 1 },
    });
    const filtered = await call(
      "GET",
      `/api/backend/${tenant}/incidents/summary?from_time=2026-03-01&to_time=2026-03-11&text_to_search=nothing-like-this`,
      { as: admin },
    );
    expect(filtered.body).toMatchObject({
      total: 0,
      open: 0,
      closed: 0,
      resolved: 0,
      mean_time_to_resolve: 0,
      previous_mean_time_to_resolve: 0,
      mean_time_to_first_response: null,
      open_by_tag: {},
      closed_by_tag: {},
    });
  });

  it("counts as open an incident opened before the range and still open", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    await seedIncident(asset, { openedAt: new Date(Date.now() - 31 * 86_400_000).toISOString(), tag: "accuracy" });
    const res = await call("GET", `/api/backend/${tenant}/incidents/summary`, { as: admin });
    expect(res.body).toMatchObject({ total: 0, open: 1, open_by_tag: { accuracy: 1 }, resolved: 0 });
    expect(Number.isInteger(res.body.mean_time_to_resolve)).toBe(true);
  });
});

describe("GET /api/backend/{tenant}/incidents/{incidentId}", () => {
  it("shows asset_id as a string, the metrics of its alerts and the history with alert_refs", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const a1 = await seedAlert(asset, { metricTime: "2026-03-01T00:00:00.000Z", metricValue: "0.30" });
    const a2 = await seedAlert(asset, {
      metricTime: "2026-03-02T00:00:00.000Z",
      metricValue: "0.45",
      details: { observed: 0.45, expected: { low: 0, high: 0.05 } },
    });
    const id = await seedIncident(asset, {
      openedAt: "2026-03-01T00:00:00.000Z",
      state: "CLOSED",
      closedAt: "2026-03-03T00:00:00.000Z",
      closeReason: "FIXED",
      alertCount: 2,
    });
    await seedHistory(tenant, id, [
      { time: "2026-03-01T00:00:00.000Z", fromState: null, toState: "OPEN", alertRefs: [a1], jobId: "j1" },
      { time: "2026-03-02T00:00:00.000Z", fromState: "OPEN", toState: "OPEN", alertRefs: [a2], jobId: "j2" },
      {
        time: "2026-03-03T00:00:00.000Z",
        fromState: "OPEN",
        toState: "CLOSED",
        alertRefs: [],
        actor: "ada@example.com",
        note: "backfill fixed",
        reason: "FIXED",
      },
    ]);
    const res = await call("GET", `/api/backend/${tenant}/incidents/${id}`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body.asset_id).toBe(String(asset.assetId));
    expect(res.body.metrics).toEqual([
      expect.objectContaining({ alert_id: a1, metric_value: "0.30", metric_time: "2026-03-01T00:00:00.000Z" }),
      {
        alert_id: a2,
        job_id: expect.any(String),
        metric: "attr:email:null_rate",
        metric_value: "0.45",
        metric_time: "2026-03-02T00:00:00.000Z",
        priority: "HIGH",
        observed: 0.45,
        expected: { low: 0, high: 0.05 },
      },
    ]);
    expect(res.body.history).toEqual([
      {
        time: "2026-03-01T00:00:00.000Z",
        from_state: null,
        to_state: "OPEN",
        alert_refs: [a1],
        actor: "system",
        note: null,
        reason: null,
        job_id: "j1",
        details: null,
      },
      expect.objectContaining({ from_state: "OPEN", to_state: "OPEN", alert_refs: [a2] }),
      expect.objectContaining({
        to_state: "CLOSED",
        actor: "ada@example.com",
        note: "backfill fixed",
        reason: "FIXED",
      }),
    ]);
    expect((await call("GET", `/api/backend/${tenant}/incidents/999999999`, { as: admin })).status).toBe(404);
    expect((await call("GET", `/api/backend/${tenant}/incidents/abc`, { as: admin })).status).toBe(400);
  });
});

describe("PATCH /api/backend/{tenant}/incidents/{incidentId}: validation", () => {
  it("needs a reason to close, refuses AUTO_RESOLVED, a reason to reopen and unknown fields", async () => {
    const tenant = await createTenant();
    const id = await seedIncident(await seedAsset(tenant, await createProject(tenant)));
    const cases: Array<[unknown, string]> = [
      [{ state: "CLOSED" }, "body.reason"],
      [{ state: "CLOSED", reason: "AUTO_RESOLVED" }, "body.reason"],
      [{ state: "OPEN", reason: "FIXED" }, "body.reason"],
      [{ state: "RESOLVED", reason: "FIXED" }, "body.state"],
      [{ state: "CLOSED", reason: "FIXED", severity: "LOW" }, "body"],
      [{ state: "CLOSED", reason: "FIXED", note: "x".repeat(2001) }, "body.note"],
    ];
    for (const [body, path] of cases) {
      const res = await call("PATCH", `/api/backend/${tenant}/incidents/${id}`, { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
  });
});

describe("POST /api/backend/{tenant}/configuration/alerts/by_filters", () => {
  it("returns the asset's alerts with those ids in the 2.6 shape; unknown and foreign ids are absent", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const asset = await seedAsset(tenant, projectId);
    const otherAsset = await seedAsset(tenant, projectId);
    const a1 = await seedAlert(asset);
    const a2 = await seedAlert(asset, { type: "freshness", attribute: "", priority: "LOW" });
    await seedAlert(asset);
    const foreign = await seedAlert(otherAsset);
    const res = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
      as: admin,
      body: { asset_id: String(asset.assetId), alert_refs: [a2, a1, foreign, 999_999_999, a1] },
    });
    expect(res.status).toBe(200);
    expect(res.body.map((x: { id: number }) => x.id)).toEqual([a1, a2]);
    expect(Object.keys(res.body[0]).slice(0, 13)).toEqual([
      "type",
      "source",
      "description",
      "job_id",
      "create_time",
      "save_time",
      "is_notification_enabled",
      "metric_time",
      "metric_value",
      "policy_name",
      "priority",
      "source_name",
      "source_type",
    ]);
    expect(res.body[1]).toMatchObject({ type: "freshness", attribute: null, source: String(asset.assetId) });
    const empty = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
      as: admin,
      body: { asset_id: String(asset.assetId), alert_refs: [] },
    });
    expect(empty.body).toEqual([]);
  });

  it("refuses more than 1000 refs, a non-numeric asset id and an unknown asset", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const path = `/api/backend/${tenant}/configuration/alerts/by_filters`;
    const many = Array.from({ length: 1001 }, (_, i) => i + 1);
    const tooMany = await call("POST", path, {
      as: admin,
      body: { asset_id: String(asset.assetId), alert_refs: many },
    });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.errors[0].path).toBe("body.alert_refs");
    const ok = await call("POST", path, {
      as: admin,
      body: { asset_id: String(asset.assetId), alert_refs: many.slice(1) },
    });
    expect(ok.status).toBe(200);
    expect((await call("POST", path, { as: admin, body: { asset_id: "x1", alert_refs: [1] } })).status).toBe(400);
    expect((await call("POST", path, { as: admin, body: { asset_id: "999999999", alert_refs: [1] } })).status).toBe(
      404,
    );
  });
});
