import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, inject, it, vi } from "vitest";
import { assetMonitor } from "../../src/contracts/asset-monitor-client";
import { requestTicket, retryPendingTickets } from "../../src/integrations/tickets";
import { ProfileBuilder } from "../../src/scan/profiler/profile-builder";
import { orders } from "../scenario/data";
import { admin, call } from "../support/api";
import { type AssetRef, seedAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { seedIncident } from "../support/incidents";
import { asDeployed } from "../support/outbound";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const jira = inject("jira");
const adfText = (text: string) => ({ type: "paragraph", content: [{ type: "text", text }] });
const MIN = 60_000;

/** A site of the fake Jira, expecting these credentials; returns its base URL and control calls. */
async function jiraSite(email = "dq-bot@example.com", token = unique("jira-token")) {
  const res = await fetch(`${jira.url}/__sites`, {
    method: "POST",
    body: JSON.stringify({ email, token, project_key: "DQ" }),
  });
  const { site } = (await res.json()) as { site: string };
  return {
    baseUrl: `${jira.url}/${site}`,
    email,
    token,
    script: (
      answers: Array<{ status: number; body?: unknown; headers?: Record<string, string>; echo?: "text" | "json" }>,
    ) => fetch(`${jira.url}/__sites/${site}/script`, { method: "POST", body: JSON.stringify(answers) }),
    requests: async () => (await (await fetch(`${jira.url}/__sites/${site}/requests`)).json()) as any[],
  };
}

const jiraPath = (tenant: string) => `/api/backend/${tenant}/configuration/integrations/jira`;
const ticketsPath = (tenant: string, incidentId: number) => `/api/backend/${tenant}/incidents/${incidentId}/tickets`;

async function createTemplate(tenant: string, customFields: Record<string, unknown> = {}): Promise<number> {
  const res = await call("POST", `/${tenant}/configuration/integrations/tickets/template`, {
    as: admin,
    body: {
      name: unique("tpl"),
      type: "JIRA",
      props: { jira_project_id: "10000", jira_issue_type_id: "10004", custom_fields: customFields },
    },
  });
  expect(res.status).toBe(201);
  return res.body.id;
}

/** A tenant with an asset, a template and a Jira integration pointing at a fresh fake site. */
async function ticketWorld(customFields: Record<string, unknown> = {}) {
  const tenant = await createTenant();
  const asset = await seedAsset(tenant, await createProject(tenant));
  const site = await jiraSite();
  const templateId = await createTemplate(tenant, customFields);
  const res = await call("PUT", jiraPath(tenant), {
    as: admin,
    body: { base_url: site.baseUrl, email: site.email, api_token: site.token },
  });
  expect(res.status).toBe(201);
  return { tenant, asset, site, templateId };
}

describeAuthMatrix(
  "jira integration and tickets",
  async (w) => {
    const asset = await seedAsset(w.tenant, w.projectId);
    return { incidentId: await seedIncident(asset), templateId: await createTemplate(w.tenant) };
  },
  [
    {
      method: "PUT",
      path: (w) => jiraPath(w.tenant),
      body: () => ({ base_url: "https://acme.atlassian.net", email: "bot@example.com", api_token: "t" }),
      role: "TENANT_ADMIN",
    },
    { method: "GET", path: (w) => jiraPath(w.tenant), role: "TENANT_ADMIN" },
    { method: "DELETE", path: (w) => jiraPath(w.tenant), role: "TENANT_ADMIN" },
    {
      method: "POST",
      path: (w, x) => ticketsPath(w.tenant, x.incidentId),
      body: (_w, x) => ({ template_id: x.templateId }),
      role: "PROJECT_EDITOR",
    },
    { method: "GET", path: (w, x) => ticketsPath(w.tenant, x.incidentId), role: "PROJECT_VIEWER" },
  ],
);

describe("PUT/GET/DELETE …/configuration/integrations/jira", () => {
  it("stores the API token sealed, never returns it, keeps it on a replace without one", async () => {
    const tenant = await createTenant();
    const token = `ATATT-${unique("secret")}`;
    const templateId = await createTemplate(tenant);
    const put = await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: "https://acme.atlassian.net/", email: "Bot@Example.com", api_token: token },
    });
    expect(put.status).toBe(201);
    expect(put.body).toEqual({
      base_url: "https://acme.atlassian.net",
      email: "Bot@Example.com",
      api_token_set: true,
      default_template_id: null,
      updated_at: expect.any(String),
    });
    const get = await call("GET", jiraPath(tenant), { as: admin });
    expect(JSON.stringify(get.body)).not.toContain(token);
    const row = await env.DB.prepare("select token_secret from jira_integrations where tenant_id = ?")
      .bind(tenant)
      .first<{ token_secret: string }>();
    expect(row!.token_secret).not.toContain(token);
    expect(Object.keys(JSON.parse(row!.token_secret)).sort()).toEqual(["ct", "iv", "kid"]);

    const replace = await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: "https://acme.atlassian.net", email: "bot@example.com", default_template_id: templateId },
    });
    expect(replace.status).toBe(200);
    expect(replace.body.default_template_id).toBe(templateId);
    const after = await env.DB.prepare("select token_secret from jira_integrations where tenant_id = ?")
      .bind(tenant)
      .first<{ token_secret: string }>();
    expect(after!.token_secret).toBe(row!.token_secret);

    expect((await call("DELETE", jiraPath(tenant), { as: admin })).status).toBe(200);
    expect((await call("GET", jiraPath(tenant), { as: admin })).status).toBe(404);
    expect((await call("DELETE", jiraPath(tenant), { as: admin })).status).toBe(404);
  });

  it("needs the token again when base_url changes, so the stored one never reaches another site", async () => {
    const { tenant, asset, site, templateId } = await ticketWorld();
    const elsewhere = await jiraSite(site.email, unique("other-token"));
    const before = await env.DB.prepare("select * from jira_integrations where tenant_id = ?").bind(tenant).first();
    const moved = await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: elsewhere.baseUrl, email: site.email },
    });
    expect(moved.status).toBe(400);
    expect(moved.body.errors).toEqual([{ path: "body.api_token", message: "is required when base_url changes" }]);
    expect(await env.DB.prepare("select * from jira_integrations where tenant_id = ?").bind(tenant).first()).toEqual(
      before,
    );
    await call("POST", ticketsPath(tenant, await seedIncident(asset)), {
      as: admin,
      body: { template_id: templateId },
    });
    expect(await elsewhere.requests()).toEqual([]);
    expect(await site.requests()).toHaveLength(1);
  });

  it("validates the body: https base URL, e-mail, token on create, a template of the tenant", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const foreignTemplate = await createTemplate(other);
    const ok = { base_url: "https://acme.atlassian.net", email: "bot@example.com", api_token: "t" };
    const cases: Array<[unknown, string]> = [
      [{ ...ok, base_url: "http://acme.atlassian.net" }, "body.base_url"],
      [{ ...ok, base_url: "https://acme.atlassian.net/?x=1" }, "body.base_url"],
      [{ ...ok, base_url: "https://user:pw@acme.atlassian.net" }, "body.base_url"],
      [{ ...ok, base_url: "not a url" }, "body.base_url"],
      [{ ...ok, email: "nope" }, "body.email"],
      [{ ...ok, api_token: "" }, "body.api_token"],
      [{ base_url: ok.base_url, email: ok.email }, "body.api_token"],
      [{ ...ok, default_template_id: foreignTemplate }, "body.default_template_id"],
      [{ ...ok, token: "t" }, "body"],
    ];
    for (const [body, path] of cases) {
      const res = await call("PUT", jiraPath(tenant), { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(
        res.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    expect((await call("GET", jiraPath(tenant), { as: admin })).status).toBe(404);
  });
});

describe("POST …/incidents/{id}/tickets against Jira Cloud's create-issue API", () => {
  let world: Awaited<ReturnType<typeof ticketWorld>>;
  beforeAll(async () => {
    world = await ticketWorld({
      customfield_10010: "team-a",
      customfield_10030: ["data-quality"],
      customfield_10020: { id: "3" },
    });
  });

  it("sends the documented request and stores the key and browse URL on the incident", async () => {
    const { tenant, asset, site, templateId } = world;
    const incidentId = await seedIncident(asset, {
      policyName: "Completeness",
      attribute: "email",
      sourceName: "orders",
      severity: "HIGH",
      alertCount: 3,
    });
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ status: "CREATED", ticket_key: "DQ-1", attempts: 1, error: null });

    const [sent, ...more] = await site.requests();
    expect(more).toEqual([]);
    expect(sent.problems).toEqual([]);
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe(`${new URL(site.baseUrl).pathname}/rest/api/3/issue`);
    expect(sent.headers.authorization).toBe(`Basic ${btoa(`${site.email}:${site.token}`)}`);
    expect(sent.headers["content-type"]).toBe("application/json");
    expect(sent.body).toEqual({
      fields: {
        project: { id: "10000" },
        issuetype: { id: "10004" },
        summary: "[HIGH] Completeness on email in orders",
        description: { type: "doc", version: 1, content: expect.any(Array) },
        customfield_10010: "team-a",
        customfield_10030: ["data-quality"],
        customfield_10020: { id: "3" },
      },
    });
    const text = JSON.stringify(sent.body.fields.description);
    expect(text).toContain(`Data quality incident #${incidentId}`);
    expect(text).toContain("3 alerts on orders");

    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incidentId}`, { as: admin });
    expect(detail.body.ticket).toEqual({ key: "DQ-1", url: `${site.baseUrl}/browse/DQ-1` });
    const listed = await call("GET", `/api/backend/${tenant}/incidents?limit=1000`, { as: admin });
    expect(listed.body.find((i: { id: number }) => i.id === incidentId).ticket.key).toBe("DQ-1");

    // Asking again returns the created request: no second issue.
    const again = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(again.body.request_id).toBe(res.body.request_id);
    expect(await site.requests()).toHaveLength(1);
    const requests = await call("GET", ticketsPath(tenant, incidentId), { as: admin });
    expect(requests.body).toEqual([res.body]);
  });

  it("a template's custom fields never replace the project, issue type, summary or description we send", async () => {
    // A row stored before custom field keys had to be customfield_N (the API refuses these now).
    const { tenant, asset, site } = await ticketWorld();
    const templateId = await createTemplate(tenant);
    const props = {
      jira_project_id: "10000",
      jira_issue_type_id: "10004",
      custom_fields: {
        project: { id: "66666" },
        issuetype: { id: "77777" },
        summary: "hijacked",
        description: { type: "doc", version: 1, content: [adfText("hijacked")] },
        customfield_10010: "team-a",
      },
    };
    await env.DB.prepare("update ticket_templates set props = ? where tenant_id = ? and id = ?")
      .bind(JSON.stringify(props), tenant, templateId)
      .run();
    const incidentId = await seedIncident(asset, {
      policyName: "Validity",
      attribute: "email",
      sourceName: "orders",
      severity: "LOW",
    });
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.body).toMatchObject({ status: "CREATED" });
    const [sent] = await site.requests();
    expect(sent.problems).toEqual([]);
    expect(sent.body.fields).toEqual({
      project: { id: "10000" },
      issuetype: { id: "10004" },
      summary: "[LOW] Validity on email in orders",
      description: { type: "doc", version: 1, content: expect.any(Array) },
      customfield_10010: "team-a",
    });
    expect(JSON.stringify(sent.body.fields.description)).toContain(`Data quality incident #${incidentId}`);
  });

  it("the fake refuses a body outside jira.js's models: a misspelt field, a description of the wrong kind", async () => {
    // What the request above sent passed these models (problems []); the same call misspelt does not.
    const site = await jiraSite();
    const fields = {
      project: { id: "10000" },
      issuetype: { id: "10004" },
      summary: "s",
      description: {
        type: "doc",
        version: 1,
        content: [{ type: "paragraph", content: [{ type: "text", text: "t" }] }],
      },
    };
    const send = (body: unknown) =>
      fetch(`${site.baseUrl}/rest/api/3/issue`, {
        method: "POST",
        headers: {
          authorization: `Basic ${btoa(`${site.email}:${site.token}`)}`,
          accept: "application/json",
          "content-type": "application/json",
        },
        body: JSON.stringify(body),
      });
    expect((await send({ fields })).status).toBe(201);
    const misspelt = await send({ fields, transitions: { id: "5" } });
    expect(misspelt.status).toBe(400);
    expect(await misspelt.json()).toEqual({
      errorMessages: ["body.transitions: no such field of the model"],
      errors: {},
    });
    const wrongKind = await send({ fields: { ...fields, description: { ...fields.description, version: "1" } } });
    expect(wrongKind.status).toBe(400);
    expect(((await wrongKind.json()) as { errorMessages: string[] }).errorMessages).toContain(
      "fields.description.version: Invalid input: expected number, received string",
    );
  });

  it("a 400 from Jira is FAILED with Jira's messages, and a new request may follow", async () => {
    const { tenant, asset, site, templateId } = world;
    const incidentId = await seedIncident(asset);
    await site.script([
      {
        status: 400,
        body: {
          errorMessages: ["Issue type is not valid"],
          errors: { customfield_10010: "Option 'team-a' is not valid" },
        },
      },
    ]);
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      status: "FAILED",
      ticket_key: null,
      error: "Jira answered 400: Issue type is not valid; customfield_10010: Option 'team-a' is not valid",
    });
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incidentId}`, { as: admin });
    expect(detail.body.ticket).toBeNull();
    // A retry run leaves a FAILED request alone.
    await retryPendingTickets(env, new Date(Date.now() + 24 * 60 * MIN));
    const second = await call("POST", ticketsPath(tenant, incidentId), {
      as: admin,
      body: { template_id: templateId },
    });
    expect(second.body.status).toBe("CREATED");
    expect(second.body.request_id).not.toBe(res.body.request_id);
    const listed = await call("GET", ticketsPath(tenant, incidentId), { as: admin });
    expect(listed.body.map((r: { status: string }) => r.status)).toEqual(["FAILED", "CREATED"]);
  });

  it("a 429 stays PENDING and is retried after Retry-After by retryPendingTickets", async () => {
    const { tenant, asset, templateId, site } = world;
    const incidentId = await seedIncident(asset);
    await site.script([
      { status: 429, body: { errorMessages: ["Rate limit exceeded"] }, headers: { "Retry-After": "300" } },
    ]);
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.body).toMatchObject({ status: "PENDING", attempts: 1, error: "Jira answered 429: Rate limit exceeded" });
    const requestId = res.body.request_id;
    const state = async () =>
      (await call("GET", ticketsPath(tenant, incidentId), { as: admin })).body.find(
        (r: { request_id: string }) => r.request_id === requestId,
      );

    // After the 1-minute backoff but before Retry-After (5 min): not due yet.
    await retryPendingTickets(env, new Date(Date.now() + 2 * MIN));
    expect(await state()).toMatchObject({ status: "PENDING", attempts: 1 });
    await retryPendingTickets(env, new Date(Date.now() + 6 * MIN));
    expect(await state()).toMatchObject({ status: "CREATED", attempts: 2, error: null });
    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incidentId}`, { as: admin });
    expect(detail.body.ticket.key).toMatch(/^DQ-\d+$/);
  });

  it("the cron leaves a fenced tenant's pending request alone: no ticket it could not record", async () => {
    const w = await ticketWorld();
    const incidentId = await seedIncident(w.asset);
    await w.site.script([
      { status: 429, body: { errorMessages: ["Rate limit exceeded"] }, headers: { "Retry-After": "60" } },
    ]);
    const res = await call("POST", ticketsPath(w.tenant, incidentId), {
      as: admin,
      body: { template_id: w.templateId },
    });
    expect(res.body).toMatchObject({ status: "PENDING", attempts: 1 });
    const sent = (await w.site.requests()).length;
    // The tenant is moving to another shard (src/tenancy/shard-move.ts): its rows here are fenced.
    await env.DB.prepare("insert into tenant_fences (tenant_id, state, since) values (?1, 'fenced', ?2)")
      .bind(w.tenant, new Date().toISOString())
      .run();
    await retryPendingTickets(env, new Date(Date.now() + 6 * MIN));
    expect((await w.site.requests()).length).toBe(sent);
    await env.DB.prepare("delete from tenant_fences where tenant_id = ?").bind(w.tenant).run();
    await retryPendingTickets(env, new Date(Date.now() + 6 * MIN));
    expect((await w.site.requests()).length).toBe(sent + 1);
    const listed = await call("GET", ticketsPath(w.tenant, incidentId), { as: admin });
    expect(listed.body).toMatchObject([{ status: "CREATED", attempts: 2 }]);
  });

  it("the cron retries exactly the due requests, however many others wait longer", async () => {
    const { tenant, asset, templateId } = world;
    const incidentId = await seedIncident(asset);
    const long = new Date(Date.now() + 24 * 60 * MIN).toISOString();
    const old = new Date(Date.now() - 60 * MIN).toISOString();
    // 101 requests of other incidents, older but not due for a day, then one that is due.
    await env.DB.prepare(
      `insert into ticket_requests (id, tenant_id, incident_id, template_id, status, attempts, next_attempt_at, created_at, updated_at)
       select 'wait' || value || ?1, ?1, -1 - value, ?2, 'PENDING', 1, ?3, ?4, ?4 from json_each(?5)`,
    )
      .bind(tenant, templateId, long, old, JSON.stringify(Array.from({ length: 101 }, (_, i) => i)))
      .run();
    const dueId = `due${tenant}`;
    await env.DB.prepare(
      `insert into ticket_requests (id, tenant_id, incident_id, template_id, status, attempts, next_attempt_at, created_at, updated_at)
       values (?1, ?2, ?3, ?4, 'PENDING', 1, ?5, ?5, ?5)`,
    )
      .bind(dueId, tenant, incidentId, templateId, new Date().toISOString())
      .run();
    await retryPendingTickets(env, new Date(Date.now() + MIN));
    const row = await env.DB.prepare("select status, attempts from ticket_requests where id = ?").bind(dueId).first();
    expect(row).toEqual({ status: "CREATED", attempts: 2 });
    const waiting = await env.DB.prepare(
      "select count(*) as n from ticket_requests where tenant_id = ? and id like 'wait%' and attempts = 1",
    )
      .bind(tenant)
      .first<{ n: number }>();
    expect(waiting!.n).toBe(101);
  });

  it("5xx keeps failing: retried with backoff until it is reported FAILED after the last attempt", async () => {
    const { tenant, asset, templateId, site } = world;
    const incidentId = await seedIncident(asset);
    await site.script(
      Array.from({ length: 8 }, () => ({ status: 503, body: { errorMessages: ["Service unavailable"] } })),
    );
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.body).toMatchObject({ status: "PENDING", attempts: 1 });
    let latest = res.body;
    // Each run is far enough ahead for any backoff; the request is never lost, only reported.
    for (let run = 1; run <= 10 && latest.status === "PENDING"; run++) {
      await retryPendingTickets(env, new Date(Date.now() + run * 2 * 60 * MIN));
      latest = (await call("GET", ticketsPath(tenant, incidentId), { as: admin })).body[0];
    }
    expect(latest).toMatchObject({
      status: "FAILED",
      attempts: 8,
      error: "Gave up after 8 attempts: Jira answered 503: Service unavailable",
    });
  });

  it("a 401 (wrong token) is FAILED; an unreachable Jira stays PENDING", async () => {
    const tenant = await createTenant();
    const asset: AssetRef = await seedAsset(tenant, await createProject(tenant));
    const site = await jiraSite();
    const templateId = await createTemplate(tenant);
    await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: site.baseUrl, email: site.email, api_token: "not-the-token" },
    });
    const incidentId = await seedIncident(asset);
    const res = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(res.body).toMatchObject({
      status: "FAILED",
      error: "Jira answered 401: Client must be authenticated to access this resource.",
    });

    // Port 9 (discard) on loopback: nothing listens there, the connection is refused.
    await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: "http://127.0.0.1:9", email: site.email, api_token: site.token },
    });
    const down = await call("POST", ticketsPath(tenant, await seedIncident(asset)), {
      as: admin,
      body: { template_id: templateId },
    });
    expect(down.body.status).toBe("PENDING");
    expect(down.body.error).toMatch(/^Jira unreachable/);
  });

  it("an echoing Jira's answer is data: no credential is stored or shown, only a short excerpt; the rest is logged", async () => {
    const { tenant, asset, site, templateId } = world;
    const basic = btoa(`${site.email}:${site.token}`);
    const logged: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => {
      logged.push(String(line));
    });
    try {
      for (const [status, echo, expected] of [
        [400, "text", "FAILED"],
        [400, "json", "FAILED"],
        [503, "text", "PENDING"],
      ] as const) {
        const incidentId = await seedIncident(asset);
        await site.script([{ status, echo }]);
        const res = await call("POST", ticketsPath(tenant, incidentId), {
          as: admin,
          body: { template_id: templateId },
        });
        expect(res.body.status).toBe(expected);
        const listed = await call("GET", ticketsPath(tenant, incidentId), { as: admin });
        const row = await env.DB.prepare("select error from ticket_requests where id = ?")
          .bind(res.body.request_id)
          .first<{ error: string }>();
        for (const [what, value] of [
          ["POST response", res.body],
          ["GET response", listed.body],
          ["stored error", row],
        ] as const) {
          const text = JSON.stringify(value);
          expect(text, `${what} (${status} ${echo})`).not.toContain(site.token);
          expect(text, `${what} (${status} ${echo})`).not.toContain(basic);
          expect(text, `${what} (${status} ${echo})`).not.toMatch(/Basic [A-Za-z0-9+/]{8,}/);
          expect(text, `${what} (${status} ${echo})`).not.toContain(site.email);
        }
        expect(row!.error).toMatch(new RegExp(`^Jira answered ${status}: `));
        expect(row!.error.length).toBeLessThanOrEqual(300);
        expect(res.body.error).toBe(row!.error);
        // The whole answer, redacted the same way, is in the logs under the ticket request's id.
        const line = logged.find((l) => l.includes(res.body.request_id));
        expect(line).toBeDefined();
        expect(JSON.parse(line!)).toMatchObject({ event: "upstream_failure", source: "jira", status });
        expect(line).not.toContain(site.token);
        expect(line).not.toContain(basic);
      }
      expect((await site.requests()).length).toBeGreaterThan(0);
    } finally {
      vi.restoreAllMocks();
    }
  });

  it("deployed, a Jira base_url on a loopback or private address is refused: at PUT (400) and at send (FAILED, nothing sent)", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const site = await jiraSite();
    const templateId = await createTemplate(tenant);
    // Written while private targets are allowed (local development) …
    const put = await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: site.baseUrl, email: site.email, api_token: site.token },
    });
    expect(put.status).toBe(201);
    await asDeployed(async () => {
      // … a deployed Worker neither accepts such a base URL …
      const again = await call("PUT", jiraPath(tenant), {
        as: admin,
        body: { base_url: "http://127.0.0.1:9", email: site.email, api_token: site.token },
      });
      expect(again.status).toBe(400);
      expect(again.body.errors).toEqual([{ path: "body.base_url", message: expect.stringMatching(/refused/) }]);
      // … nor sends the token to one stored before.
      const res = await call("POST", ticketsPath(tenant, await seedIncident(asset)), {
        as: admin,
        body: { template_id: templateId },
      });
      expect(res.status).toBe(201);
      expect(res.body.status).toBe("FAILED");
      expect(res.body.error).toMatch(/^Jira base_url refused: .*127\.0\.0\.1.*(https|loopback)/);
    });
    expect(await site.requests()).toEqual([]);
  });

  it("needs an integration (409), a template of the tenant (400) and an incident of the tenant (404)", async () => {
    const tenant = await createTenant();
    const asset = await seedAsset(tenant, await createProject(tenant));
    const incidentId = await seedIncident(asset);
    const templateId = await createTemplate(tenant);
    const none = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: templateId } });
    expect(none.status).toBe(409);
    const site = await jiraSite();
    await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: site.baseUrl, email: site.email, api_token: site.token },
    });
    const foreign = await createTemplate(world.tenant);
    const bad = await call("POST", ticketsPath(tenant, incidentId), { as: admin, body: { template_id: foreign } });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].path).toBe("body.template_id");
    const missing = await call("POST", ticketsPath(tenant, 999_999_999), {
      as: admin,
      body: { template_id: templateId },
    });
    expect(missing.status).toBe(404);
    expect(await site.requests()).toEqual([]);
  });

  it("requestTicket works outside a request, as the AssetMonitor calls it for a default template", async () => {
    const { tenant, asset, templateId } = world;
    const incidentId = await seedIncident(asset);
    const row = await requestTicket(env, { tenantId: tenant, incidentId, templateId, actor: "system" });
    expect(row).toMatchObject({ status: "CREATED", incidentId, templateId, attempts: 1 });
    // Called twice (a retried open), it returns the same request.
    const again = await requestTicket(env, { tenantId: tenant, incidentId, templateId, actor: "system" });
    expect(again.id).toBe(row.id);
  });
});

describe("the default template", () => {
  it("opens a ticket when a scan opens an incident, and only then", async () => {
    const { tenant, asset, site, templateId } = await ticketWorld();
    const put = await call("PUT", jiraPath(tenant), {
      as: admin,
      body: { base_url: site.baseUrl, email: site.email, default_template_id: templateId },
    });
    expect(put.status).toBe(200);
    const monitored = {
      tenantId: tenant,
      id: asset.assetId,
      name: "orders",
      type: "S3",
      projectId: asset.projectId,
      connectionId: asset.connectionId,
    };
    const stub = assetMonitor(env, tenant, asset.assetId);
    const scan = async (n: number, problem?: "null_spike") => {
      const builder = new ProfileBuilder({ inferFromText: false });
      builder.add(orders(n, new Date(), problem) as unknown as Record<string, unknown>[]);
      return stub.applyScan({
        asset: monitored,
        jobId: `job_tk_${asset.assetId}_${n}`,
        createdAt: new Date().toISOString(),
        scanTime: new Date().toISOString(),
        profile: builder.finish(),
      });
    };
    await scan(1, "null_spike");
    const incident = await vi.waitFor(
      async () => {
        const row = await env.DB.prepare("select id, ticket_key, ticket_url from incidents where asset_id = ?")
          .bind(asset.assetId)
          .first<{ id: number; ticket_key: string | null; ticket_url: string | null }>();
        expect(row?.ticket_key).toMatch(/^DQ-\d+$/);
        return row!;
      },
      { timeout: 10_000, interval: 25 },
    );
    expect(incident.ticket_url).toContain(`/browse/${incident.ticket_key}`);
    // The same incident collecting another alert opens no second ticket.
    await scan(2, "null_spike");
    expect(await site.requests()).toHaveLength(1);
  });
});
