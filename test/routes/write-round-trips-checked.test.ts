/**
 * Issue 40, point 3, for the writes whose access or conditions are checked in their one batch
 * (Access.assetInBatch, conditions that decide the answer): one sequential D1 round trip, the same
 * answers as before (a refused caller changes nothing and is audited, a stranger gets a 404, a
 * request that does not fit the asset its 409/400), and each write audited once with its status.
 */
import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
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
