/**
 * Issue 40, point 3, for the writes whose access or conditions are checked in their one batch
 * (Access.assetInBatch, conditions that decide the answer): one sequential D1 round trip, the same
 * answers as before (a refused caller changes nothing and is audited, a stranger gets a 404, a
 * request that does not fit the asset its 409/400), and each write audited once with its status.
 */
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection, VALID_CONNECTIONS } from "../support/connections";
import { seedIncident } from "../support/incidents";
import { createProject, projectMember } from "../support/projects";
import { receiver } from "../support/receivers";
import { audited, sequential } from "../support/round-trips";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

async function memberOf(tenant: string, projectId: number, role?: string): Promise<Credential> {
  const email = `${unique("user")}@example.com`;
  await tenantMember(tenant, email, "TENANT_MEMBER");
  if (role) await projectMember(tenant, projectId, email, role);
  return userToken(email);
}

describe("writes checked in their one batch", () => {
  it("dq_score PUT/DELETE: one round trip; a refused caller changes nothing and is audited; a stranger a 404", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection.id, { type: "S3" });
    const path = `/api/backend/${tenant}/configuration/assets/${asset.id}/dq_score`;
    const body = { enabled: false };
    const viewer = await memberOf(tenant, projectId, "PROJECT_VIEWER");
    expect((await call("PUT", path, { as: viewer, body })).status).toBe(403);
    expect((await call("PUT", path, { as: await memberOf(tenant, projectId), body })).status).toBe(404);
    expect((await call("PUT", path, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    expect((await call("DELETE", path, { as: viewer })).status).toBe(403);
    expect((await call("GET", path, { as: admin })).body.dq_score_config.enabled).toBe(true);
    const editor = await memberOf(tenant, projectId, "PROJECT_EDITOR");
    // Resetting an asset without settings of its own deletes nothing, and is still a write done.
    const reset = await call("DELETE", path, { as: editor });
    expect(reset.status).toBe(200);
    expect(sequential(reset)).toBe(1);
    const put = await call("PUT", path, { as: editor, body });
    expect(put.status).toBe(200);
    expect(put.body.dq_score_config.enabled).toBe(false);
    expect(sequential(put)).toBe(1);
    expect((await call("GET", path, { as: admin })).body.dq_score_config.enabled).toBe(false);
    expect(await audited(tenant, "PUT", path)).toEqual([200, 403]);
    expect(await audited(tenant, "DELETE", path)).toEqual([200, 403]);
    // Another tenant's asset, by id, through this tenant: not there.
    const other = await createTenant();
    const stranger = await call("PUT", `/api/backend/${other}/configuration/assets/${asset.id}/dq_score`, {
      as: admin,
      body,
    });
    expect(stranger.status).toBe(404);
  });

  it("POST scans: one round trip; an UPLOAD asset is still a 409 and a wrong location a 400, with no job", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const uploads = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/connections`, {
      as: admin,
      body: { name: unique("uploads"), type: "UPLOAD" },
    });
    expect(uploads.status).toBe(201);
    const asset = await createAsset(tenant, projectId, uploads.body.id, { type: "UPLOAD" });
    const path = `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`;
    const refused = await call("POST", path, { as: admin, body: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain("is an UPLOAD asset");
    const s3 = await createConnection(tenant, { projectId, type: "S3" });
    const files = await createAsset(tenant, projectId, s3.id, { type: "S3" });
    const filesPath = `/api/backend/${tenant}/configuration/assets/${files.id}/scans`;
    const wrong = await call("POST", filesPath, { as: admin, body: { location: "SNOWFLAKE" } });
    expect(wrong.status).toBe(400);
    const viewer = await memberOf(tenant, projectId, "PROJECT_VIEWER");
    expect((await call("POST", filesPath, { as: viewer, body: {} })).status).toBe(403);
    expect((await call("GET", path, { as: admin })).body).toEqual([]);
    expect((await call("GET", filesPath, { as: admin })).body).toEqual([]);
    const queued = await call("POST", filesPath, { as: await memberOf(tenant, projectId, "PROJECT_EDITOR"), body: {} });
    expect(queued.status).toBe(202);
    expect(sequential(queued)).toBe(1);
    expect((await call("GET", filesPath, { as: admin })).body.map((j: { job_id: string }) => j.job_id)).toEqual([
      queued.body.job_id,
    ]);
    // The accepted trigger is counted in its route's tally (decision 0015); the refused ones keep their path.
    expect(await audited(tenant, "POST", `/api/backend/${tenant}/configuration/assets/:assetId/scans`)).toEqual([202]);
    expect(await audited(tenant, "POST", filesPath)).toEqual([403, 400]);
    expect(await audited(tenant, "POST", path)).toEqual([409]);
  });

  it("PUT jira: one round trip, audited as 201 when it creates and 200 when it replaces; refusals change nothing", async () => {
    const tenant = await createTenant();
    const path = `/api/backend/${tenant}/configuration/integrations/jira`;
    const site = { base_url: "https://acme.atlassian.net", email: "bot@example.com" };
    const noToken = await call("PUT", path, { as: admin, body: site });
    expect(noToken.status).toBe(400);
    const noTemplate = await call("PUT", path, {
      as: admin,
      body: { ...site, api_token: "t1", default_template_id: 999_999 },
    });
    expect(noTemplate.status).toBe(400);
    expect((await call("GET", path, { as: admin })).status).toBe(404);
    const created = await call("PUT", path, { as: admin, body: { ...site, api_token: "t1" } });
    expect(created.status).toBe(201);
    expect(sequential(created)).toBe(1);
    const replaced = await call("PUT", path, { as: admin, body: { ...site, email: "other@example.com" } });
    expect(replaced.status).toBe(200);
    expect(replaced.body.email).toBe("other@example.com");
    expect(sequential(replaced)).toBe(1);
    const moved = await call("PUT", path, { as: admin, body: { ...site, base_url: "https://other.atlassian.net" } });
    expect(moved.status).toBe(400);
    expect(moved.body.errors ?? moved.body).toBeTruthy();
    expect((await call("GET", path, { as: admin })).body.base_url).toBe(site.base_url);
    expect(await audited(tenant, "PUT", path)).toEqual([400, 200, 201, 400, 400]);
  });
});

describe("POST schema in two sequential D1 round trips (a call out to the source between)", () => {
  it("checks the caller with the asset's reads in one batch; a refused caller reaches no source and writes nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection.id, { type: "S3" });
    const path = `/api/data/${tenant}/assets/${asset.id}/schema`;
    expect((await call("POST", path, { as: await memberOf(tenant, projectId, "PROJECT_VIEWER") })).status).toBe(403);
    expect((await call("POST", path, { as: await memberOf(tenant, projectId) })).status).toBe(404);
    expect((await call("POST", path, { as: await tenantKey(await createTenant()) })).status).toBe(404);
    // No test source serves the asset: the source's refusal, after one batch of reads.
    const refused = await call("POST", path, { as: await memberOf(tenant, projectId, "PROJECT_EDITOR") });
    expect(refused.status).toBe(422);
    expect(sequential(refused), refused.headers.get("server-timing") ?? "").toBe(2);
    const row = await call(
      "GET",
      `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${asset.id}?with_attributes=true`,
      {
        as: admin,
      },
    );
    expect(row.body.attributes).toEqual([]);
    expect(await audited(tenant, "POST", path)).toEqual([422, 403]);
  });
});

describe("POST tickets in two sequential D1 round trips (Jira called between)", () => {
  it("checks the caller in the request's batch; a refused caller asks nothing of Jira and writes nothing", async () => {
    const jira = inject("jira");
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await createConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection.id, { type: "S3" });
    const incidentId = await seedIncident({ tenant, projectId, assetId: asset.id, connectionId: connection.id });
    const token = unique("jira-token");
    const site = (await (
      await fetch(`${jira.url}/__sites`, {
        method: "POST",
        body: JSON.stringify({ email: "bot@example.com", token, project_key: "DQ" }),
      })
    ).json()) as { site: string };
    const template = await call("POST", `/${tenant}/configuration/integrations/tickets/template`, {
      as: admin,
      body: {
        name: unique("tpl"),
        type: "JIRA",
        props: { jira_project_id: "10000", jira_issue_type_id: "10004", custom_fields: {} },
      },
    });
    expect(template.status).toBe(201);
    const integration = await call("PUT", `/api/backend/${tenant}/configuration/integrations/jira`, {
      as: admin,
      body: { base_url: `${jira.url}/${site.site}`, email: "bot@example.com", api_token: token },
    });
    expect(integration.status).toBe(201);
    const path = `/api/backend/${tenant}/incidents/${incidentId}/tickets`;
    const body = { template_id: template.body.id };
    const viewer = await memberOf(tenant, projectId, "PROJECT_VIEWER");
    const refused = await call("POST", path, { as: viewer, body });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toBe("This needs the PROJECT_EDITOR role");
    expect((await call("POST", path, { as: await memberOf(tenant, projectId), body })).status).toBe(404);
    expect((await call("POST", path, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    const editor = await memberOf(tenant, projectId, "PROJECT_EDITOR");
    expect((await call("POST", `/api/backend/${tenant}/incidents/999999/tickets`, { as: editor, body })).status).toBe(
      404,
    );
    const noTemplate = await call("POST", path, { as: editor, body: { template_id: 999_999 } });
    expect(noTemplate.status).toBe(400);
    expect((await call("GET", path, { as: admin })).body).toEqual([]);
    const requests = async () => (await (await fetch(`${jira.url}/__sites/${site.site}/requests`)).json()) as unknown[];
    expect(await requests()).toEqual([]);
    const asked = await call("POST", path, { as: editor, body });
    expect(asked.status, JSON.stringify(asked.body)).toBe(201);
    expect(asked.body).toMatchObject({ status: "CREATED", ticket_key: "DQ-1", attempts: 1 });
    expect(sequential(asked), asked.headers.get("server-timing") ?? "").toBe(2);
    expect(await requests()).toHaveLength(1);
    // Asked again: the created request, in the one batch.
    const again = await call("POST", path, { as: editor, body });
    expect(again.body.request_id).toBe(asked.body.request_id);
    expect(sequential(again)).toBe(1);
    expect(await audited(tenant, "POST", path)).toEqual([201, 201, 400, 403]);
  });
});

describe("connection PUT, replaced whole, in one sequential D1 round trip", () => {
  it("checks the caller, the name, the stored connection and its assets in the UPDATE's batch; refusals change nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const own = await createConnection(tenant, { projectId, type: "S3" });
    const global = await createConnection(tenant, { type: "S3" });
    const other = await createConnection(tenant, { projectId, type: "S3" });
    const used = await createConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, used.id, { type: "S3" });
    const projectPath = `/api/backend/${tenant}/configuration/projects/${projectId}/connections`;
    const tenantPath = `/api/backend/${tenant}/configuration/connections`;
    const s3 = VALID_CONNECTIONS.S3!;
    const whole = (name: string) => ({ name, type: "S3", payload: s3.payload, credential: s3.credential });
    const stored = async () =>
      (
        await env.DB.prepare(
          "select id, name, type, payload, db_type, seal_id from connections where tenant_id = ? order by id",
        )
          .bind(tenant)
          .all()
      ).results;
    const before = await stored();
    const path = `${projectPath}/${own.id}`;
    const body = whole(unique("renamed"));
    const viewer = await memberOf(tenant, projectId, "PROJECT_VIEWER");
    expect((await call("PUT", path, { as: viewer, body })).status).toBe(403);
    expect((await call("PUT", path, { as: await memberOf(tenant, projectId), body })).status).toBe(404);
    expect((await call("PUT", path, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    const editor = await memberOf(tenant, projectId, "PROJECT_EDITOR");
    const onGlobal = await call("PUT", `${projectPath}/${global.id}`, { as: editor, body });
    expect(onGlobal.status).toBe(403);
    expect(onGlobal.body.detail).toBe("This needs the TENANT_ADMIN role");
    expect((await call("PUT", `${projectPath}/999999`, { as: editor, body })).status).toBe(404);
    const badPayload = await call("PUT", path, { as: editor, body: { ...body, payload: { bucket: 7 } } });
    expect(badPayload.status).toBe(400);
    expect(badPayload.body.errors.map((e: { path: string }) => e.path)).toEqual(["body.payload.bucket"]);
    const wrongCredential = await call("PUT", path, {
      as: editor,
      body: { ...body, credential: VALID_CONNECTIONS.AZURE!.credential },
    });
    expect(wrongCredential.status).toBe(400);
    expect(wrongCredential.body.errors.map((e: { path: string }) => e.path)).toEqual(["body.credential.type"]);
    const clash = await call("PUT", path, { as: editor, body: whole(other.name) });
    expect(clash.status).toBe(409);
    expect(clash.body.detail).toBe(`A connection named '${other.name}' already exists here`);
    const azure = VALID_CONNECTIONS.AZURE!;
    const retyped = await call("PUT", `${projectPath}/${used.id}`, {
      as: editor,
      body: { type: "AZURE", payload: azure.payload, credential: azure.credential },
    });
    expect(retyped.status).toBe(409);
    expect(retyped.body.detail).toContain(`type cannot change while assets use it: ${asset.id} (asset ids)`);
    expect(await stored()).toEqual(before);

    const replaced = await call("PUT", path, { as: editor, body });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body).toMatchObject({ id: own.id, name: body.name, type: "S3" });
    expect(sequential(replaced), replaced.headers.get("server-timing") ?? "").toBe(1);
    // Unused, the connection changes type in the same one round trip.
    const azureWhole = { type: "AZURE", payload: azure.payload, credential: azure.credential };
    const toAzure = await call("PUT", `${tenantPath}/${other.id}`, { as: admin, body: azureWhole });
    expect(toAzure.status, JSON.stringify(toAzure.body)).toBe(200);
    expect(toAzure.body).toMatchObject({ id: other.id, name: other.name, type: "AZURE" });
    expect(sequential(toAzure)).toBe(1);
    const after = await stored();
    expect(after.filter((r) => r.id !== own.id && r.id !== other.id)).toEqual(
      before.filter((r) => r.id !== own.id && r.id !== other.id),
    );
    expect(await audited(tenant, "PUT", path)).toEqual([200, 409, 400, 400, 403]);
    expect(await audited(tenant, "PUT", `${projectPath}/${global.id}`)).toEqual([403]);
    expect(await audited(tenant, "PUT", `${projectPath}/${used.id}`)).toEqual([409]);
    expect(await audited(tenant, "PUT", `${tenantPath}/${other.id}`)).toEqual([200]);
  });
});

describe("asset PUT in one sequential D1 round trip", () => {
  it("checks the caller, the schedule, the connection and the names in the UPDATE's batch; refusals change nothing", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const first = await createConnection(tenant, { projectId, type: "S3" });
    const second = await createConnection(tenant, { projectId, type: "S3" });
    const azure = await createConnection(tenant, { projectId, type: "AZURE" });
    const elsewhere = await createConnection(tenant, { projectId: await createProject(tenant), type: "S3" });
    const asset = await createAsset(tenant, projectId, first.id, { type: "S3" });
    const named = await createAsset(tenant, projectId, first.id, { type: "S3", options: { id_attributes: ["id"] } });
    const path = `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${asset.id}`;
    const payload = { path: "in/*.csv", format: "csv" };
    const body = { name: unique("renamed"), type: "S3", payload, connection_id: second.id };
    const stored = async () =>
      (
        await env.DB.prepare(
          "select id, name, type, payload, options, connection_id, db_type, schedule_cron, updated_at from assets where tenant_id = ? order by id",
        )
          .bind(tenant)
          .all()
      ).results;
    const before = await stored();
    expect((await call("PUT", path, { as: await memberOf(tenant, projectId, "PROJECT_VIEWER"), body })).status).toBe(
      403,
    );
    expect((await call("PUT", path, { as: await memberOf(tenant, projectId), body })).status).toBe(404);
    expect((await call("PUT", path, { as: await tenantKey(await createTenant()), body })).status).toBe(404);
    const editor = await memberOf(tenant, projectId, "PROJECT_EDITOR");
    expect((await call("PUT", `${path}9`, { as: editor, body })).status).toBe(404);
    const problems = async (sent: Record<string, unknown>) => {
      const res = await call("PUT", path, { as: editor, body: sent });
      expect(res.status, JSON.stringify(res.body)).toBe(400);
      return res.body.errors;
    };
    expect(await problems({ ...body, connection_id: azure.id })).toEqual([
      { path: "body.connection_id", message: "is a AZURE connection; the type is S3" },
    ]);
    expect(await problems({ ...body, connection_id: elsewhere.id })).toEqual([
      { path: "body.connection_id", message: "no such connection in this project" },
    ]);
    expect((await problems({ ...body, payload: {} })).map((e: { path: string }) => e.path)).toEqual([
      "body.payload.path",
      "body.payload.format",
    ]);
    expect(await stored()).toEqual(before);

    const moved = await call("PUT", path, { as: editor, body });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body).toMatchObject({
      id: asset.id,
      name: body.name,
      connection_id: second.id,
      db_type: asset.db_type,
    });
    expect(sequential(moved), moved.headers.get("server-timing") ?? "").toBe(1);
    const renamed = await call("PUT", path, { as: editor, body: { description: "kept apart" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ name: body.name, description: "kept apart", connection_id: second.id });
    expect(sequential(renamed)).toBe(1);
    // Stored options that name attributes are checked against the new database in the Worker: two.
    const namedPath = `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${named.id}`;
    const checked = await call("PUT", namedPath, { as: editor, body });
    expect(checked.status, JSON.stringify(checked.body)).toBe(200);
    expect(checked.body).toMatchObject({ connection_id: second.id, options: { id_attributes: ["id"] } });
    expect(sequential(checked)).toBe(2);
    expect(await audited(tenant, "PUT", path)).toEqual([200, 200, 400, 400, 400, 403]);
    expect(await audited(tenant, "PUT", namedPath)).toEqual([200]);
  });
});

describe("channel PUT and test: the access check read with the channel", () => {
  it("two round trips for a caller whose standing is not cached; a refused caller changes and calls nothing", async () => {
    const tenant = await createTenant();
    const base = `/api/backend/${tenant}/configuration/notifications/channels`;
    const url = (await receiver()).url;
    const created = await call("POST", base, { as: admin, body: { name: unique("ch"), type: "WEBHOOK", url } });
    expect(created.status).toBe(201);
    const path = `${base}/${created.body.id}`;
    const stored = async () =>
      (
        await env.DB.prepare(
          "select name, url, url_secret, signing_secret, seal_id from notification_channels where tenant_id = ?",
        )
          .bind(tenant)
          .all()
      ).results;
    const deliveries = async () =>
      (await call("GET", `${path}/deliveries`, { as: admin })).body.map((d: { id: string }) => d.id);
    const before = await stored();
    const body = { name: unique("renamed"), type: "WEBHOOK", url };
    const member = async (role: "TENANT_ADMIN" | "TENANT_MEMBER") => {
      const email = `${unique("user")}@example.com`;
      await tenantMember(tenant, email, role);
      return userToken(email);
    };
    const plain = await member("TENANT_MEMBER");
    expect((await call("PUT", path, { as: plain, body })).status).toBe(403);
    expect((await call("POST", `${path}/test`, { as: plain })).status).toBe(403);
    const stranger = await tenantKey(await createTenant());
    expect((await call("PUT", path, { as: stranger, body })).status).toBe(404);
    expect((await call("POST", `${path}/test`, { as: stranger })).status).toBe(404);
    expect(await stored()).toEqual(before);
    expect(await deliveries()).toEqual([]);
    // Each admin's first request: its standing is read in the channel's batch, not before it.
    const replaced = await call("PUT", path, { as: await member("TENANT_ADMIN"), body });
    expect(replaced.status, JSON.stringify(replaced.body)).toBe(200);
    expect(replaced.body.name).toBe(body.name);
    expect(sequential(replaced), replaced.headers.get("server-timing") ?? "").toBe(2);
    const tested = await call("POST", `${path}/test`, { as: await member("TENANT_ADMIN") });
    expect(tested.status, JSON.stringify(tested.body)).toBe(200);
    expect(tested.body.delivered).toBe(true);
    expect(sequential(tested)).toBe(2);
    expect(await deliveries()).toEqual([tested.body.webhook_id]);
    expect(await audited(tenant, "PUT", path)).toEqual([200, 403]);
    expect(await audited(tenant, "POST", `${path}/test`)).toEqual([200, 403]);
  });
});
