/**
 * Issue 40, point 3: how many sequential D1 round trips every write route of the OpenAPI document
 * takes today (the Server-Timing header of src/db/metered.ts, counted, never timed). The routes are
 * read from /openapi.json (POST, PUT, PATCH, DELETE), so a new write route is counted as soon as it
 * exists and must be added to SEQUENTIAL; each is called with a request that succeeds, built from
 * fixtures (BODIES), by a caller the route admits. The table is printed; a route whose count moves
 * (a conversion to one batch, or a regression) fails here until SEQUENTIAL says so.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { admin, type Credential, call, fillPath } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection, VALID_CONNECTIONS } from "../support/connections";
import { seedIncident } from "../support/incidents";
import { createProject, projectMember } from "../support/projects";
import { receiver } from "../support/receivers";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

interface Op {
  method: string;
  path: string;
  operationId: string;
  access?: { of: string };
}

const WRITES = ["post", "put", "patch", "delete"] as const;

const sequential = (res: { headers: Headers }) =>
  Number(/desc="\d+ round trips, (\d+) sequential"/.exec(res.headers.get("server-timing") ?? "")?.[1]);

let ops: Op[] = [];
let v: Record<string, string> = {};
let key: Credential;
let user: Credential;

/** How to call one write route so that it succeeds: its body, and path values of its own (a delete's victim). */
interface Fixture {
  body?: (v: Record<string, string>) => unknown;
  params?: (v: Record<string, string>) => Promise<Record<string, string>> | Record<string, string>;
  query?: (v: Record<string, string>) => string;
  /** What a later route needs of this one's answer (the scan job it started, the group it made). */
  after?: (body: any, v: Record<string, string>) => void;
  /** A route no fixture here can make succeed: the status it answers instead, and why. */
  refused?: { status: number; why: string };
}

const S3_CONNECTION = VALID_CONNECTIONS.S3;
const s3Asset = (v: Record<string, string>) => ({
  name: unique("a"),
  type: "S3",
  payload: { path: "in/*.csv", format: "csv" },
  connection_id: Number(v.connectionId),
});

/** A request that succeeds for every write route, by operationId. */
const FIXTURES: Record<string, Fixture> = {
  issueToken: { body: (v) => ({ api_key: v.rawKey }) },
  createUserKey: { body: () => ({ name: unique("k") }) },
  deleteUserKey: { params: (v) => ({ keyId: v.userKeyId! }) },
  createTenantKey: { body: () => ({ name: unique("k") }) },
  deleteTenantKey: {},
  putTenant: { body: () => ({ name: unique("tenant") }) },
  createProject: { body: () => ({ name: unique("p") }) },
  updateProject: { body: () => ({ name: unique("renamed") }) },
  deleteProject: { params: async (v) => ({ projectId: String(await createProject(v.tenant!)) }) },
  addProjectMember: { body: () => ({ email: `${unique("m")}@example.com`, role: "PROJECT_VIEWER" }) },
  changeProjectMember: { body: () => ({ role: "PROJECT_EDITOR" }) },
  removeProjectMember: {},
  putTenantMember: { body: () => ({ role: "TENANT_MEMBER" }), params: () => ({ email: `${unique("t")}@example.com` }) },
  removeTenantMember: {},
  createProjectConnection: { body: () => ({ name: unique("c"), type: "S3", ...S3_CONNECTION }) },
  createGlobalConnection: { body: () => ({ name: unique("c"), type: "S3", ...S3_CONNECTION }) },
  updateProjectConnection: { body: () => ({ name: unique("c"), type: "S3", ...S3_CONNECTION }) },
  updateConnection: {
    body: () => ({ name: unique("c"), type: "S3", ...S3_CONNECTION }),
    params: (v) => ({ connectionId: v.globalConnectionId! }),
  },
  createAsset: { body: s3Asset },
  moveAssets: {
    body: (v) => ({ source_project_id: Number(v.otherProjectId), source_asset_ids: [v.movableAssetId] }),
  },
  updateAsset: { body: s3Asset },
  deleteAsset: { params: (v) => ({ assetId: v.doomedAssetId! }) },
  setAssetLineage: { body: () => ({ parents: [] }) },
  loadSchema: { refused: { status: 422, why: "reads the asset's source, which no test source serves here" } },
  createSourceGroup: {
    body: (v) => ({
      name: unique("g"),
      type: "SNOWFLAKE",
      connection_id: Number(v.snowflakeId),
      payload: { database: "DW", schema: "PUBLIC" },
      assets: [{ name: "orders", table_or_file_name: "ORDERS" }],
    }),
    after: (body, v) => {
      v.sourceGroupId = String(body.group_id);
    },
  },
  moveSourceGroups: {
    body: (v) => ({ source_project_id: Number(v.otherProjectId), source_group_ids: [Number(v.movableGroupId)] }),
  },
  updateSourceGroup: { body: () => ({ name: unique("g") }) },
  deleteSourceGroup: {},
  listSourceGroupAssetNames: { body: () => ({}) },
  putSparkJobConfig: { body: () => ({ spark_properties: { "spark.executor.memory": "8g" } }) },
  deleteSparkJobConfig: {},
  putDqScoreConfig: {
    body: () => ({ enabled: true, weights: { completeness: 0.4, accuracy: 0.3, consistency: 0.2, timeliness: 0.1 } }),
  },
  deleteDqScoreConfig: {},
  triggerScan: {
    body: () => ({}),
    after: (body, v) => {
      v.job_id = body.job_id;
    },
  },
  cancelScan: {},
  postScanCallback: {
    body: () => ({}),
    refused: { status: 401, why: "signed by the Spark driver of a full scan (test/pipeline), refused unsigned here" },
  },
  uploadBatch: { body: () => ({}) },
  uploadDeprecatedSource: { body: () => ({}) },
  uploadDeprecatedV2Source: { body: () => ({}) },
  uploadDeprecatedTenant: { body: () => ({}), query: (v) => `?source_id=${v.assetId}` },
  uploadDeprecatedV2Tenant: { body: () => ({}), query: (v) => `?source_id=${v.assetId}` },
  putPolicies: { body: () => ({ overrides: { completeness: { notify: false } } }) },
  startBackfill: { body: () => ({}) },
  updateIncident: { body: () => ({ state: "CLOSED", reason: "FIXED" }) },
  scanAlerts: { body: () => ({}), query: (v) => `?job_id=${v.job_id}` },
  alertsByFilters: { body: (v) => ({ asset_id: v.assetId, alert_refs: [] }) },
  putJiraIntegration: {
    body: () => ({ base_url: "https://acme.atlassian.net", email: "bot@example.com", api_token: unique("token") }),
  },
  deleteJiraIntegration: {},
  createTicketTemplate: {
    body: () => ({
      name: unique("tpl"),
      type: "JIRA",
      props: { jira_project_id: "10001", jira_issue_type_id: "10004", custom_fields: {} },
    }),
  },
  updateTicketTemplate: {
    body: () => ({
      name: unique("tpl"),
      type: "JIRA",
      props: { jira_project_id: "10001", jira_issue_type_id: "10004", custom_fields: {} },
    }),
  },
  createTicket: { body: (v) => ({ template_id: Number(v.templateId) }) },
  createChannel: { body: (v) => ({ name: unique("ch"), type: "WEBHOOK", url: v.receiverUrl }) },
  replaceChannel: { body: (v) => ({ name: unique("ch"), type: "WEBHOOK", url: v.receiverUrl }) },
  deleteChannel: {},
  testChannel: {},
};

/**
 * Each write route's sequential D1 round trips on the request above (`METHOD path` as in the
 * OpenAPI document), by the caller it is called with: a tenant key read once before (its
 * authentication is cached in the isolate), a tenant admin's token for a user's own keys, the
 * platform administrator's key for the platform's routes. Issue 40 wants 1 for each.
 */
const SEQUENTIAL: Record<string, number> = {
  "POST /auth/token": 1,
  "POST /auth/api_keys": 1,
  "POST /auth/{tenant}/apiKeys": 1,
  // Read first only when a storage secret is omitted (kept from the sealed stored value): 2 then.
  "PUT /backend/private/configuration/tenants/{tenantId}": 1,
  "POST /api/backend/{tenant}/configuration/projects": 1,
  "PUT /api/backend/{tenant}/configuration/projects/{projectId}": 1,
  "POST /api/backend/{tenant}/configuration/projects/{projectId}/members": 1,
  "PUT /api/backend/{tenant}/configuration/projects/{projectId}/members/{email}": 1,
  "PUT /api/backend/{tenant}/configuration/members/{email}": 1,
  // The credential is sealed for a new seal id, the id chosen in the INSERT (max + 1): one batch.
  "POST /api/backend/{tenant}/configuration/projects/{projectId}/connections": 1,
  "POST /api/backend/{tenant}/configuration/connections": 1,
  // Replaced whole (type, payload, credential): the access check, the name's namesakes and the
  // assets a new type would strand are conditions of the UPDATE, read in the same batch to tell a
  // refusal. A partial change is checked against the stored connection in the Worker: 2.
  "PUT /api/backend/{tenant}/configuration/projects/{projectId}/connections/{connectionId}": 1,
  "PUT /api/backend/{tenant}/configuration/connections/{connectionId}": 1,
  "POST /api/backend/{tenant}/configuration/projects/{projectId}/assets": 1,
  // Both projects' checks and the move's checks (the assets, their connections, the target's) are
  // conditions of the UPDATEs, read in the same batch to tell a refusal.
  "POST /api/backend/{tenant}/configuration/projects/{targetProjectId}/assets/move": 1,
  // The access check, the schedule against the type, the connection (visible, of the type) and the
  // names its database must hold are conditions of the UPDATE, the asset and connection read in the
  // same batch to tell a refusal. 2 where the Worker checks what is stored: a payload kept for a
  // new type, or stored options that name attributes for a new connection's database.
  "PUT /api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}": 1,
  // The asset and the ids named (assets the caller can read) are conditions of the edges' writes,
  // the lineage written read back in the same batch.
  "PUT /api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}/lineage": 1,
  // The asset's source is read (a call out) only once the access check has passed: 2, the floor
  // (the check, the asset, its connection and the schema source in one batch; the attributes and
  // the audit row in another). Counted here on a refusal of the source (422): the check, the audit.
  "POST /api/data/{tenant}/assets/{assetId}/schema": 2,
  // The connection's checks are conditions of the inserts (group, assets, their ANALYZE jobs), the
  // new assets' ids read back in the same batch; the jobs are then sent to the queue.
  "POST /api/backend/v2/{tenant}/configuration/projects/{projectId}/source_groups": 1,
  // As assets/move: both projects' checks and the move's checks are conditions of the UPDATEs.
  "POST /api/backend/v2/{tenant}/configuration/projects/{targetProjectId}/source_groups/move": 1,
  // Two, the floor: the access check, the group, its connection and the assets to delete are read
  // in one batch; the change is checked against the stored group in the Worker (its stored payload
  // parsed again for its type, its names for its database: no SQL condition), then the writes and
  // the audit row.
  "PUT /api/backend/v2/{tenant}/configuration/projects/{projectId}/source_groups/{sourceGroupId}": 2,
  "POST /api/backend/v2/{tenant}/configuration/projects/{projectId}/source_groups/{sourceGroupId}/list": 1,
  "PUT /configuration/tenants/{tenant}/spark-job-config": 1,
  "PUT /api/backend/{tenant}/configuration/assets/{assetId}/dq_score": 1,
  "POST /api/backend/{tenant}/configuration/assets/{assetId}/scans": 1,
  // A job handed to a Spark provider: its run is cancelled there first (read, call out, write).
  "POST /api/backend/{tenant}/configuration/assets/{assetId}/scans/{job_id}/cancel": 1,
  "POST /api/callbacks/scans/{job_id}": 1,
  "POST /v2/{tenant}/sources/{source_id}/batch_data": 1,
  "POST /api/data/{tenant}/sources/{source}/batch_data": 1,
  "POST /api/data/v2/{tenant}/sources/{source}/batch_data": 1,
  "POST /api/data/{tenant}/batch_data": 1,
  "POST /api/data/v2/{tenant}/batch_data": 1,
  "PUT /api/backend/{tenant}/configuration/assets/{assetId}/policies": 1,
  "POST /api/backend/{tenant}/incidents/historical": 1,
  // The incident is read (access, its asset) before its AssetMonitor is called; the detail and the audit row after.
  "PATCH /api/backend/{tenant}/incidents/{incidentId}": 2,
  "POST /api/backend/{tenant}/configuration/sources/{sourceID}/alerts": 1,
  "POST /api/backend/{tenant}/configuration/alerts/by_filters": 1,
  "PUT /api/backend/{tenant}/configuration/integrations/jira": 1,
  "POST /{tenant}/configuration/integrations/tickets/template": 1,
  "PUT /{tenant}/configuration/integrations/tickets/template/{templateId}": 1,
  // Two, the floor: Jira is called between the batch that checks the caller, reads what the
  // request needs, inserts it, claims its first attempt and writes the audit row, and the batch
  // that records Jira's answer (the call needs the token and template read by the first).
  "POST /api/backend/{tenant}/incidents/{incidentId}/tickets": 2,
  // The URL and secret are sealed for a new seal id, the id chosen in the INSERT (max + 1): one batch.
  "POST /api/backend/{tenant}/configuration/notifications/channels": 1,
  // Two, the floor: the stored channel decides the change (the URL kept as read, a secret sent
  // again when the host changes, one generated for a Slack channel made a webhook), and a kept URL
  // or secret is opened and sealed again for the new seal id in the Worker (it is bound to the
  // stored seal id, which only the read gives): the access check, the channel and the tenant's
  // projects in one batch, then the UPDATE and its audit row.
  "PUT /api/backend/{tenant}/configuration/notifications/channels/{channelId}": 2,
  // Two, the floor: the access check and the channel are read in one batch before its receiver is
  // called (the URL is sealed in the row); the delivery (the receiver's answer) and the audit row after.
  "POST /api/backend/{tenant}/configuration/notifications/channels/{channelId}/test": 2,
  "DELETE /auth/api_keys/{keyId}": 1,
  "DELETE /auth/{tenant}/apiKeys/{keyId}": 1,
  "DELETE /api/backend/{tenant}/configuration/projects/{projectId}": 1,
  "DELETE /api/backend/{tenant}/configuration/projects/{projectId}/members/{email}": 1,
  "DELETE /api/backend/{tenant}/configuration/members/{email}": 1,
  "DELETE /api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}": 1,
  "DELETE /api/backend/v2/{tenant}/configuration/projects/{projectId}/source_groups/{sourceGroupId}": 1,
  "DELETE /configuration/tenants/{tenant}/spark-job-config": 1,
  "DELETE /api/backend/{tenant}/configuration/assets/{assetId}/dq_score": 1,
  "DELETE /api/backend/{tenant}/configuration/integrations/jira": 1,
  "DELETE /api/backend/{tenant}/configuration/notifications/channels/{channelId}": 1,
};

const ok = (res: { status: number; body: unknown }) => {
  if (res.status >= 300) throw new Error(`${res.status} ${JSON.stringify(res.body)}`);
  return res.body as any;
};

beforeAll(async () => {
  const doc = (await call("GET", "/openapi.json")).body;
  ops = Object.entries(doc.paths as Record<string, Record<string, any>>).flatMap(([path, item]) =>
    WRITES.filter((m) => item[m]).map((m) => ({
      method: m.toUpperCase(),
      path,
      operationId: item[m].operationId as string,
      access: item[m]["x-access"],
    })),
  );
  const tenant = await createTenant();
  key = await tenantKey(tenant);
  const email = `${unique("user")}@example.com`;
  await tenantMember(tenant, email, "TENANT_ADMIN");
  user = await userToken(email);
  const as = admin;
  const projectId = await createProject(tenant);
  const otherProjectId = await createProject(tenant);
  const connection = await createConnection(tenant, { projectId, type: "S3" });
  const globalConnection = await createConnection(tenant, { type: "S3" });
  const snowflake = await createConnection(tenant, { projectId, type: "SNOWFLAKE" });
  const s3 = { type: "S3", payload: { path: "in/*.csv", format: "csv" } };
  const asset = await createAsset(tenant, projectId, connection.id, s3);
  const doomed = await createAsset(tenant, projectId, connection.id, s3);
  const movable = await createAsset(tenant, otherProjectId, globalConnection.id, s3);
  const globalSnowflake = await createConnection(tenant, { type: "SNOWFLAKE" });
  const group = ok(
    await call("POST", `/api/backend/v2/${tenant}/configuration/projects/${otherProjectId}/source_groups`, {
      as,
      body: FIXTURES.createSourceGroup!.body!({ snowflakeId: String(globalSnowflake.id) }),
    }),
  );
  const incidentId = await seedIncident({ tenant, projectId, assetId: asset.id, connectionId: connection.id });
  const receiverUrl = (await receiver()).url;
  const base = `/api/backend/${tenant}/configuration`;
  const channel = ok(
    await call("POST", `${base}/notifications/channels`, { as, body: FIXTURES.createChannel!.body!({ receiverUrl }) }),
  );
  const template = ok(
    await call("POST", `/${tenant}/configuration/integrations/tickets/template`, {
      as,
      body: FIXTURES.createTicketTemplate!.body!({}),
    }),
  );
  const tenantKeyRow = ok(await call("POST", `/auth/${tenant}/apiKeys`, { as, body: { name: unique("k") } }));
  const userKeyRow = ok(await call("POST", "/auth/api_keys", { as: user, body: { name: unique("k") } }));
  const member = `${unique("member")}@example.com`;
  await tenantMember(tenant, member, "TENANT_MEMBER");
  await projectMember(tenant, projectId, member, "PROJECT_VIEWER");
  v = {
    tenant,
    tenantId: tenant,
    projectId: String(projectId),
    targetProjectId: String(projectId),
    otherProjectId: String(otherProjectId),
    assetId: String(asset.id),
    doomedAssetId: String(doomed.id),
    movableAssetId: String(movable.id),
    sourceID: String(asset.id),
    source_id: String(asset.id),
    source: String(asset.id),
    incidentId: String(incidentId),
    connectionId: String(connection.id),
    globalConnectionId: String(globalConnection.id),
    snowflakeId: String(snowflake.id),
    movableGroupId: String(group.group_id),
    channelId: String(channel.id),
    templateId: String(template.id),
    keyId: tenantKeyRow.id,
    userKeyId: userKeyRow.id,
    rawKey: tenantKeyRow.key,
    receiverUrl,
    job_id: "job_none",
    sourceGroupId: "1",
    email: member,
  };
}, 120_000);

describe("sequential D1 round trips of every write route", () => {
  it("every write route has a fixture", () => {
    expect(ops.length).toBeGreaterThan(50);
    expect(ops.filter((o) => !FIXTURES[o.operationId]).map((o) => o.operationId)).toEqual([]);
  });

  it("counts each one's round trips on a request that succeeds", { timeout: 180_000 }, async () => {
    // Deletes last: they remove what the others write to.
    const order = [...ops.filter((o) => o.method !== "DELETE"), ...ops.filter((o) => o.method === "DELETE")];
    // The tenant key is authenticated (read from D1, then cached) before any write is counted.
    expect((await call("GET", `/api/backend/${v.tenant}/configuration/projects`, { as: key })).status).toBe(200);
    const counted: Record<string, number> = {};
    const wrong: string[] = [];
    const rows: string[] = [];
    for (const op of order) {
      const fixture = FIXTURES[op.operationId]!;
      const values = { ...v, ...(await fixture.params?.(v)) };
      const as = op.access?.of === "platform" ? admin : op.access?.of === "user" ? user : key;
      const url = fillPath(op.path, values) + (fixture.query?.(values) ?? "");
      const res = await call(op.method, url, { as, ...(fixture.body ? { body: fixture.body(values) } : {}) });
      const route = `${op.method} ${op.path}`;
      const status = fixture.refused?.status;
      if (status === undefined ? res.status >= 300 : res.status !== status)
        wrong.push(`${route}: ${res.status} ${JSON.stringify(res.body)}`);
      if (res.status < 300) fixture.after?.(res.body, v);
      counted[route] = sequential(res);
      const note = fixture.refused ? `  (${res.status}: ${fixture.refused.why})` : "";
      rows.push(
        `${route.padEnd(100)} ${String(SEQUENTIAL[route] ?? "-").padStart(6)} ${String(counted[route]).padStart(5)}${note}`,
      );
    }
    console.log(
      [`${"route".padEnd(100)} ${"table".padStart(6)} ${"today".padStart(5)}`, ...rows].join("\n"),
      `\n${Object.values(counted).filter((n) => n === 1).length} of ${order.length} write routes in one sequential round trip`,
    );
    expect(wrong).toEqual([]);
    expect(counted).toEqual(SEQUENTIAL);
  });
});
