/**
 * The typed client (clients/ts) against the service under `wrangler dev`: every call below is
 * checked by the types generated from the served OpenAPI document.
 */
import { randomUUID } from "node:crypto";
import { describe, expect, inject, it } from "vitest";
import { BOOKMARK_HEADER, createDqClient } from "../clients/ts";
import { s3Connection } from "./fixtures";

const { base, adminKey } = inject("worker");

describe("the typed client", () => {
  it("creates a tenant and a project, lists projects and reads an asset", async () => {
    const dq = createDqClient({ baseUrl: base, apiKey: adminKey });
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const created = await dq.PUT("/backend/private/configuration/tenants/{tenantId}", {
      params: { path: { tenantId: tenant } },
      body: { name: "Client test" },
    });
    expect(created.response.status).toBe(201);

    const project = await dq.POST("/api/backend/{tenant}/configuration/projects", {
      params: { path: { tenant } },
      body: { name: "orders" },
    });
    expect(project.error).toBeUndefined();
    const projectId = project.data!.id;

    const list = await dq.GET("/api/backend/{tenant}/configuration/projects", { params: { path: { tenant } } });
    expect(list.data?.map((p) => p.name)).toEqual(["orders"]);

    const connectionId = await s3Connection(dq, tenant, projectId);
    const asset = await dq.POST("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
      params: { path: { tenant, projectId } },
      body: {
        name: "orders_csv",
        type: "S3",
        connection_id: connectionId,
        payload: { path: "orders/*.csv", format: "csv" },
      },
    });
    expect(asset.error).toBeUndefined();
    const read = await dq.GET("/api/backend/{tenant}/configuration/projects/{projectId}/assets/{assetId}", {
      params: { path: { tenant, projectId, assetId: asset.data!.id } },
    });
    expect(read.data).toMatchObject({ id: asset.data!.id, name: "orders_csv", type: "S3" });
  });

  it("sends back the newest session bookmark it was given", async () => {
    const sent: (string | null)[] = [];
    const dq = createDqClient({
      baseUrl: base,
      apiKey: adminKey,
      fetch: (input, init) => {
        const request = new Request(input, init);
        sent.push(request.headers.get(BOOKMARK_HEADER));
        return fetch(request);
      },
    });
    const tenant = `t-${randomUUID().slice(0, 8)}`;
    const created = await dq.PUT("/backend/private/configuration/tenants/{tenantId}", {
      params: { path: { tenantId: tenant } },
      body: { name: "Bookmark test" },
    });
    const given = created.response.headers.get(BOOKMARK_HEADER);
    expect(given).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
    const listed = await dq.GET("/api/backend/{tenant}/configuration/projects", { params: { path: { tenant } } });
    expect(listed.response.status).toBe(200);
    expect(sent).toEqual([null, given]);
  });

  it("answers errors as typed problems", async () => {
    const dq = createDqClient({ baseUrl: base, apiKey: "dqm_not_a_key" });
    const res = await dq.GET("/api/backend/{tenant}/configuration/projects", { params: { path: { tenant: "acme" } } });
    expect(res.response.status).toBe(401);
    expect(res.error).toMatchObject({ status: 401, title: expect.any(String) });
  });
});
