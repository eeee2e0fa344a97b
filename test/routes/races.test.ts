/**
 * Concurrent writes (issue 12, finding 3): D1 has no cross-request transactions, so the database
 * itself settles every race. A unique name loses with 409 (never a second row, never a 500), a
 * delete succeeds once (the others are 404), a singleton's first PUT answers 201 once, and an
 * incident changes state once per change.
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { conflictOf, uniqueViolation } from "../../src/db/unique";
import { type ApiResponse, admin, call } from "../support/api";
import { countRows, createAsset, seedAsset } from "../support/assets";
import { insertConnection, VALID_CONNECTIONS } from "../support/connections";
import { keptEntries, seedIncident } from "../support/incidents";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const base = (t: string) => `/api/backend/${t}/configuration`;
const templates = (t: string) => `/${t}/configuration/integrations/tickets/template`;
const template = (name: string) => ({
  name,
  type: "JIRA",
  props: { jira_project_id: "10001", jira_issue_type_id: "10004", custom_fields: {} },
});

/** `n` copies of one request, sent at once. */
function race(n: number, send: () => Promise<ApiResponse>): Promise<ApiResponse[]> {
  return Promise.all(Array.from({ length: n }, send));
}

/**
 * Runs ROUNDS independent races at once, each on its own target from `setup`: how requests
 * interleave varies from run to run, and several races at once make a lost race near certain to
 * show when the database does not settle it.
 */
const ROUNDS = 3;
async function rounds<T>(setup: () => Promise<T>, run: (target: T) => Promise<void>): Promise<void> {
  const targets = await Promise.all(Array.from({ length: ROUNDS }, setup));
  await Promise.all(targets.map(run));
}

/** Races send many requests at once: on a busy machine they take longer than a plain test. */
const RACE = { timeout: 60_000 };

/** How many responses had each status, e.g. {201: 1, 409: 19}. */
function tally(responses: ApiResponse[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of responses) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** Every loser got the documented problem (conflict or not_found), never a 5xx. */
function expectLosers(responses: ApiResponse[], status: 404 | 409) {
  for (const r of responses.filter((r) => r.status === status)) {
    expect(r.headers.get("Content-Type")).toContain("application/problem+json");
    expect(r.body.code).toBe(status === 409 ? "conflict" : "not_found");
  }
}

describe("races on unique names: one winner, the rest 409, one row", RACE, () => {
  it("20 parallel creates of a project connection with one name", async () => {
    const tenant = await createTenant();
    await rounds(
      () => createProject(tenant),
      async (projectId) => {
        const name = unique("conn");
        const responses = await race(20, () =>
          call("POST", `${base(tenant)}/projects/${projectId}/connections`, {
            as: admin,
            body: { name, type: "S3", ...VALID_CONNECTIONS.S3 },
          }),
        );
        expect(tally(responses)).toEqual({ 201: 1, 409: 19 });
        expectLosers(responses, 409);
        expect(await countRows("connections", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
      },
    );
  });

  it("20 parallel creates of a GLOBAL connection with one name", async () => {
    await rounds(createTenant, async (tenant) => {
      const name = unique("conn");
      const responses = await race(20, () =>
        call("POST", `${base(tenant)}/connections`, { as: admin, body: { name, type: "S3", ...VALID_CONNECTIONS.S3 } }),
      );
      expect(tally(responses)).toEqual({ 201: 1, 409: 19 });
      expectLosers(responses, 409);
      expect(await countRows("connections", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
    });
  });

  it("10 parallel renames of connections onto one name", async () => {
    const tenant = await createTenant();
    await rounds(
      async () => {
        const projectId = await createProject(tenant);
        const ids = await Promise.all(
          Array.from({ length: 10 }, () => insertConnection(tenant, { projectId, type: "S3" })),
        );
        return { projectId, ids };
      },
      async ({ projectId, ids }) => {
        const name = unique("conn");
        const responses = await Promise.all(
          ids.map((id) =>
            call("PUT", `${base(tenant)}/projects/${projectId}/connections/${id}`, { as: admin, body: { name } }),
          ),
        );
        expect(tally(responses)).toEqual({ 200: 1, 409: 9 });
        expectLosers(responses, 409);
        expect(await countRows("connections", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
      },
    );
  });

  it("one name is still free once per scope: in each project and among the GLOBAL ones", async () => {
    const tenant = await createTenant();
    const [p1, p2] = [await createProject(tenant), await createProject(tenant)];
    const body = { name: unique("conn"), type: "S3", ...VALID_CONNECTIONS.S3 };
    const created = await Promise.all([
      call("POST", `${base(tenant)}/projects/${p1}/connections`, { as: admin, body }),
      call("POST", `${base(tenant)}/projects/${p2}/connections`, { as: admin, body }),
      call("POST", `${base(tenant)}/connections`, { as: admin, body }),
    ]);
    expect(created.map((r) => r.status)).toEqual([201, 201, 201]);
    // … and in another tenant.
    const other = await createTenant();
    expect((await call("POST", `${base(other)}/connections`, { as: admin, body })).status).toBe(201);
  });

  it("20 parallel creates of a project with one name", async () => {
    await rounds(createTenant, async (tenant) => {
      const name = unique("project");
      const responses = await race(20, () => call("POST", `${base(tenant)}/projects`, { as: admin, body: { name } }));
      expect(tally(responses)).toEqual({ 201: 1, 409: 19 });
      expectLosers(responses, 409);
      expect(await countRows("projects", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
    });
  });

  it("10 parallel renames of projects onto one name", async () => {
    await rounds(
      async () => {
        const tenant = await createTenant();
        return { tenant, ids: await Promise.all(Array.from({ length: 10 }, () => createProject(tenant))) };
      },
      async ({ tenant, ids }) => {
        const name = unique("project");
        const responses = await Promise.all(
          ids.map((id) => call("PUT", `${base(tenant)}/projects/${id}`, { as: admin, body: { name } })),
        );
        expect(tally(responses)).toEqual({ 200: 1, 409: 9 });
        expectLosers(responses, 409);
        expect(await countRows("projects", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
      },
    );
  });

  it("10 parallel adds of one member to a project", async () => {
    const tenant = await createTenant();
    await rounds(
      () => createProject(tenant),
      async (projectId) => {
        const email = `${unique("member")}@example.com`;
        const responses = await race(10, () =>
          call("POST", `${base(tenant)}/projects/${projectId}/members`, {
            as: admin,
            body: { email, role: "PROJECT_VIEWER" },
          }),
        );
        expect(tally(responses)).toEqual({ 201: 1, 409: 9 });
        expectLosers(responses, 409);
        expect(await countRows("project_members", "project_id = ? and user_email = ?", projectId, email)).toBe(1);
      },
    );
  });

  it("20 parallel creates of a ticket template with one name", async () => {
    await rounds(createTenant, async (tenant) => {
      const name = unique("tpl");
      const responses = await race(20, () => call("POST", templates(tenant), { as: admin, body: template(name) }));
      expect(tally(responses)).toEqual({ 201: 1, 409: 19 });
      expectLosers(responses, 409);
      expect(await countRows("ticket_templates", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
    });
  });

  it("10 parallel renames of ticket templates onto one name", async () => {
    await rounds(
      async () => {
        const tenant = await createTenant();
        const created = await Promise.all(
          Array.from({ length: 10 }, () =>
            call("POST", templates(tenant), { as: admin, body: template(unique("tpl")) }),
          ),
        );
        return { tenant, ids: created.map((res) => res.body.id as number) };
      },
      async ({ tenant, ids }) => {
        const name = unique("tpl");
        const responses = await Promise.all(
          ids.map((id) =>
            call("PUT", `${templates(tenant)}/${id}`, {
              as: admin,
              body: { name, jira_project_id: "1", jira_issue_type_id: "2", custom_fields: {} },
            }),
          ),
        );
        expect(tally(responses)).toEqual({ 200: 1, 409: 9 });
        expectLosers(responses, 409);
        expect(await countRows("ticket_templates", "tenant_id = ? and name = ?", tenant, name)).toBe(1);
      },
    );
  });

  it("the database itself refuses a second row with a unique name, whatever the code checks", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const now = new Date().toISOString();
    const insertConnectionNamed = (name: string, project: number | null) =>
      env.DB.prepare(
        `insert into connections (tenant_id, project_id, name, type, payload, credential_type, credential_secret,
           created_by, created_at, updated_at) values (?, ?, ?, 'S3', '{}', 'AWS', '{}', 'test', ?, ?)`,
      )
        .bind(tenant, project, name, now, now)
        .run();
    const duplicates: Array<[string, () => Promise<unknown>]> = [];
    for (const project of [projectId, null]) {
      const name = unique("conn");
      await insertConnectionNamed(name, project);
      duplicates.push([`connection in ${project ?? "GLOBAL"}`, () => insertConnectionNamed(name, project)]);
    }
    const projectName = unique("project");
    const insertProject = () =>
      env.DB.prepare(
        "insert into projects (tenant_id, name, created_by, created_at, updated_at) values (?, ?, 'test', ?, ?)",
      )
        .bind(tenant, projectName, now, now)
        .run();
    await insertProject();
    duplicates.push(["project", insertProject]);
    const templateName = unique("tpl");
    const insertTemplate = () =>
      env.DB.prepare(
        `insert into ticket_templates (tenant_id, name, type, props, created_by, created_at, updated_at)
         values (?, ?, 'JIRA', '{}', 'test', ?, ?)`,
      )
        .bind(tenant, templateName, now, now)
        .run();
    await insertTemplate();
    duplicates.push(["ticket template", insertTemplate]);
    for (const [what, insert] of duplicates) {
      await expect(insert(), what).rejects.toThrow(/UNIQUE constraint failed/);
    }
  });
});

describe("races on deletes: one success, the rest 404", RACE, () => {
  it("10 parallel DELETEs of one asset", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId, type: "S3" });
    await rounds(
      async () =>
        (await createAsset(tenant, projectId, connection, { type: "S3", payload: { path: "o/*.csv", format: "csv" } }))
          .id as number,
      async (assetId) => {
        const responses = await race(10, () =>
          call("DELETE", `${base(tenant)}/projects/${projectId}/assets/${assetId}`, { as: admin }),
        );
        expect(tally(responses)).toEqual({ 200: 1, 404: 9 });
        expectLosers(responses, 404);
        expect(await countRows("assets", "id = ?", assetId)).toBe(0);
      },
    );
  });

  it("10 parallel DELETEs of one project", async () => {
    const tenant = await createTenant();
    await rounds(
      () => createProject(tenant),
      async (projectId) => {
        const responses = await race(10, () => call("DELETE", `${base(tenant)}/projects/${projectId}`, { as: admin }));
        expect(tally(responses)).toEqual({ 200: 1, 404: 9 });
        expectLosers(responses, 404);
        expect(await countRows("projects", "id = ?", projectId)).toBe(0);
      },
    );
  });

  it("a project deleted while connections are created in it: no 5xx, and no connection outlives it", async () => {
    const tenant = await createTenant();
    await rounds(
      () => createProject(tenant),
      async (projectId) => {
        const creates = Array.from({ length: 10 }, () =>
          call("POST", `${base(tenant)}/projects/${projectId}/connections`, {
            as: admin,
            body: { name: unique("conn"), type: "S3", ...VALID_CONNECTIONS.S3 },
          }),
        );
        const responses = await Promise.all([
          call("DELETE", `${base(tenant)}/projects/${projectId}`, { as: admin }),
          ...creates,
        ]);
        for (const r of responses) expect([200, 201, 404, 409], JSON.stringify(r.body)).toContain(r.status);
        if ((await countRows("projects", "id = ?", projectId)) === 0) {
          expect(await countRows("connections", "project_id = ?", projectId)).toBe(0);
        }
      },
    );
  });

  it("a project that holds an asset is still refused (409), and kept", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const responses = await race(5, () => call("DELETE", `${base(tenant)}/projects/${asset.projectId}`, { as: admin }));
    expect(tally(responses)).toEqual({ 409: 5 });
    expect(await countRows("projects", "id = ?", asset.projectId)).toBe(1);
  });

  it("10 parallel DELETEs of one source group", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId: null, type: "SNOWFLAKE", dbType: "snowflake" });
    const groups = `/api/backend/v2/${tenant}/configuration/projects/${projectId}/source_groups`;
    await rounds(
      async () => {
        const created = await call("POST", groups, {
          as: admin,
          body: {
            name: unique("group"),
            type: "SNOWFLAKE",
            connection_id: connection,
            payload: { database: "DW", schema: "PUBLIC" },
            assets: [{ name: "orders", table_or_file_name: "ORDERS" }],
          },
        });
        expect(created.status).toBe(201);
        return created.body.group_id as number;
      },
      async (groupId) => {
        const responses = await race(10, () => call("DELETE", `${groups}/${groupId}`, { as: admin }));
        expect(tally(responses)).toEqual({ 200: 1, 404: 9 });
        expectLosers(responses, 404);
        expect(await countRows("source_groups", "id = ?", groupId)).toBe(0);
        expect(await countRows("assets", "source_group_id = ?", groupId)).toBe(0);
      },
    );
  });
});

describe("races on singletons: the first PUT answers 201 once", RACE, () => {
  it("10 parallel first PUTs of a tenant's configuration: one 201, the rest 200, one row", async () => {
    await rounds(
      async () => unique("t"),
      async (tenantId) => {
        const responses = await race(10, () =>
          call("PUT", `/backend/private/configuration/tenants/${tenantId}`, { as: admin, body: { name: "Racing" } }),
        );
        expect(tally(responses)).toEqual({ 200: 9, 201: 1 });
        expect(await countRows("tenants", "id = ?", tenantId)).toBe(1);
        // created_at is the creator's, in every answer.
        const createdAt = responses.find((r) => r.status === 201)!.body.created_at;
        for (const r of responses) expect(r.body.created_at).toBe(createdAt);
      },
    );
  });

  it("10 parallel first PUTs of a tenant's Jira integration: one 201, the rest 200, one row", async () => {
    await rounds(createTenant, async (tenant) => {
      const responses = await race(10, () =>
        call("PUT", `/api/backend/${tenant}/configuration/integrations/jira`, {
          as: admin,
          body: { base_url: "https://acme.atlassian.net", email: "bot@example.com", api_token: unique("token") },
        }),
      );
      expect(tally(responses)).toEqual({ 200: 9, 201: 1 });
      expect(await countRows("jira_integrations", "tenant_id = ?", tenant)).toBe(1);
    });
  });

  it("10 parallel first PUTs of a tenant member: one 201, the rest 200, one row", async () => {
    const tenant = await createTenant();
    await rounds(
      async () => `${unique("member")}@example.com`,
      async (email) => {
        const responses = await race(10, () =>
          call("PUT", `${base(tenant)}/members/${email}`, { as: admin, body: { role: "TENANT_MEMBER" } }),
        );
        expect(tally(responses)).toEqual({ 200: 9, 201: 1 });
        expect(await countRows("tenant_members", "tenant_id = ? and user_email = ?", tenant, email)).toBe(1);
      },
    );
  });
});

describe("races on incident transitions (through the asset's AssetMonitor)", RACE, () => {
  it("2 parallel closes of one incident: one 200, one 409, one OPEN→CLOSED entry", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    await rounds(
      () => seedIncident(asset),
      async (incidentId) => {
        const path = `/api/backend/${tenant}/incidents/${incidentId}`;
        const responses = await race(2, () =>
          call("PATCH", path, { as: admin, body: { state: "CLOSED", reason: "FIXED" } }),
        );
        expect(tally(responses)).toEqual({ 200: 1, 409: 1 });
        expectLosers(responses, 409);
        const closes = (await keptEntries(incidentId)).filter((e) => e.fromState === "OPEN" && e.toState === "CLOSED");
        expect(closes).toHaveLength(1);
      },
    );
  });
});

describe("reading a UNIQUE constraint failure", () => {
  const d1 = (message: string) => new Error(`D1_ERROR: ${message}: SQLITE_CONSTRAINT`);
  /** drizzle's wrapper quotes the parameters, which a caller chose. */
  const wrapped = (params: string, cause?: Error) =>
    Object.assign(new Error(`Failed query: insert into "projects" …\nparams: ${params}`), { cause });

  it("names the table and the key's columns from D1's message, through drizzle's wrapper", () => {
    const err = wrapped("t1,analytics", d1("UNIQUE constraint failed: projects.tenant_id, projects.name"));
    expect(uniqueViolation(err)).toEqual({ table: "projects", columns: ["tenant_id", "name"] });
    expect(conflictOf(err)?.message).toBe("A project with this name already exists");
    expect(conflictOf(err, "A project named 'analytics' already exists")?.message).toContain("'analytics'");
  });

  it("is not fooled by a name that reads like the message, and ignores keys no caller chooses", () => {
    const spoof = wrapped(
      "t1,UNIQUE constraint failed: projects.tenant_id, projects.name",
      d1("NOT NULL constraint failed"),
    );
    expect(uniqueViolation(spoof)).toBeUndefined();
    expect(conflictOf(d1("UNIQUE constraint failed: connections.id"))).toBeUndefined();
    expect(conflictOf(new Error("network down"))).toBeUndefined();
  });
});
