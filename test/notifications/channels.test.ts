/**
 * Notification channels (issue 15): the CRUD routes, the secret shown once, the test event a
 * receiver verifies with the Standard Webhooks reference library, the delivery log, and the
 * safety rules (https and public hosts when deployed, secrets sealed and never returned).
 */

import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { secretBox } from "../../src/lib/crypto";
import { admin, call } from "../support/api";
import { describeAuthMatrix } from "../support/auth-matrix";
import { asDeployed } from "../support/outbound";
import { createProject } from "../support/projects";
import { receiver } from "../support/receivers";
import { createTenant, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const channelsPath = (tenant: string) => `/api/backend/${tenant}/configuration/notifications/channels`;

async function createChannel(tenant: string, body: Record<string, unknown>) {
  return call("POST", channelsPath(tenant), { as: admin, body: { name: unique("ch"), ...body } });
}

describeAuthMatrix(
  "notification channels",
  async (w) => {
    const r = await receiver();
    const res = await createChannel(w.tenant, { type: "WEBHOOK", url: r.url });
    return { channelId: res.body.id as number, url: r.url };
  },
  [
    {
      method: "POST",
      path: (w) => channelsPath(w.tenant),
      body: (_w, x) => ({ name: unique("m"), type: "WEBHOOK", url: x.url }),
      role: "TENANT_ADMIN",
    },
    { method: "GET", path: (w) => channelsPath(w.tenant), role: "TENANT_ADMIN" },
    { method: "GET", path: (w, x) => `${channelsPath(w.tenant)}/${x.channelId}`, role: "TENANT_ADMIN" },
    {
      method: "PUT",
      path: (w, x) => `${channelsPath(w.tenant)}/${x.channelId}`,
      body: (_w, x) => ({ name: unique("m"), type: "WEBHOOK", url: x.url }),
      role: "TENANT_ADMIN",
    },
    { method: "DELETE", path: (w, x) => `${channelsPath(w.tenant)}/${x.channelId}`, role: "TENANT_ADMIN" },
    { method: "POST", path: (w, x) => `${channelsPath(w.tenant)}/${x.channelId}/test`, role: "TENANT_ADMIN" },
    { method: "GET", path: (w, x) => `${channelsPath(w.tenant)}/${x.channelId}/deliveries`, role: "TENANT_ADMIN" },
  ],
);

describe("notification channels", () => {
  it("creates a webhook channel with defaults and shows the generated secret once", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const res = await createChannel(tenant, { type: "WEBHOOK", url: `${r.url}?token=abc123secret` });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      type: "WEBHOOK",
      events: ["incident.opened", "incident.escalated"],
      min_severity: "LOW",
      project_ids: [],
      enabled: true,
      secret_set: true,
      created_by: "platform-admin",
    });
    expect(res.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    // Only the scheme and host of the URL are shown; the secret never comes back.
    expect(res.body.url).toBe(new URL(r.url).origin);
    const got = await call("GET", `${channelsPath(tenant)}/${res.body.id}`, { as: admin });
    expect(got.status).toBe(200);
    expect(got.body.secret).toBeUndefined();
    expect(JSON.stringify(got.body)).not.toContain(res.body.secret.slice(6));
    const list = await call("GET", channelsPath(tenant), { as: admin });
    expect(list.body.map((c: { id: number }) => c.id)).toEqual([res.body.id]);
    expect(JSON.stringify(list.body)).not.toContain(res.body.secret.slice(6));
  });

  it("keeps the secret and the URL sealed at rest, bound to the row", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const secret = `whsec_${btoa("k".repeat(32))}`;
    const res = await createChannel(tenant, { type: "WEBHOOK", url: `${r.url}?sig=query-token-123`, secret });
    expect(res.status).toBe(201);
    expect(res.body.secret).toBeUndefined();
    const row = await env.DB.prepare("select * from notification_channels where id = ?")
      .bind(res.body.id)
      .first<Record<string, string>>();
    expect(JSON.stringify(row)).not.toContain(btoa("k".repeat(32)));
    expect(JSON.stringify(row)).not.toContain("query-token-123");
    // A sealed value copied into another row does not open there (the row's seal id, unique among
    // channels, is its additional data).
    expect(row!.seal_id).toMatch(/^[0-9a-f-]{36}$/);
    const slackReceiver = await receiver("slack");
    const slack = await createChannel(tenant, { type: "SLACK", url: slackReceiver.url });
    await env.DB.prepare("update notification_channels set url_secret = ? where id = ?")
      .bind(row!.url_secret, slack.body.id)
      .run();
    const test = await call("POST", `${channelsPath(tenant)}/${slack.body.id}/test`, { as: admin });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ delivered: false, status_code: null });
    expect(test.body.error).toMatch(/could not be opened/);
    expect(await slackReceiver.requests()).toEqual([]);
    expect(await r.requests()).toEqual([]);
    expect(JSON.parse(row!.signing_secret!)).toHaveProperty("ct");
  });

  it("opens a URL and secret sealed for the row id, as before seal ids (seal_id null)", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const secret = `whsec_${btoa("s".repeat(32))}`;
    const res = await createChannel(tenant, { type: "WEBHOOK", url: `${r.url}?sig=legacy`, secret });
    expect(res.status).toBe(201);
    const id = res.body.id as number;
    const box = secretBox(env.ENCRYPTION_KEYS);
    const sealed = async (value: string, what: string) =>
      JSON.stringify(await box.seal(value, `notification_channel:${id}:${what}`));
    await env.DB.prepare(
      "update notification_channels set url_secret = ?, signing_secret = ?, seal_id = null where id = ?",
    )
      .bind(await sealed(`${r.url}?sig=legacy`, "url"), await sealed(secret, "secret"), id)
      .run();
    const test = await call("POST", `${channelsPath(tenant)}/${id}/test`, { as: admin });
    expect(test.status).toBe(200);
    expect(test.body).toMatchObject({ delivered: true });
    expect(await r.requests()).toHaveLength(1);
  });

  it("a member neither reads channels nor their deliveries, nor creates or tests one", async () => {
    const tenant = await createTenant();
    const email = `${unique("m")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const member = await userToken(email);
    const r = await receiver();
    const made = await createChannel(tenant, { type: "SLACK", url: r.url });
    expect(made.status).toBe(201);
    const path = `${channelsPath(tenant)}/${made.body.id}`;
    for (const [method, url] of [
      ["GET", channelsPath(tenant)],
      ["GET", path],
      ["GET", `${path}/deliveries`],
      ["POST", `${path}/test`],
    ] as const) {
      const res = await call(method, url, { as: member });
      expect(res.status, `${method} ${url}`).toBe(403);
      expect(JSON.stringify(res.body)).not.toContain("127.0.0.1");
    }
    const refused = await call("POST", channelsPath(tenant), {
      as: member,
      body: { name: "x", type: "SLACK", url: r.url },
    });
    expect(refused.status).toBe(403);
    expect(await r.requests()).toEqual([]);
  });

  it("validates the body, naming each field, and writes nothing", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ type: "EMAIL", url: r.url }, "type"],
      [{ type: "WEBHOOK", url: "not a url" }, "url"],
      [{ type: "WEBHOOK", url: r.url, secret: "plain-secret" }, "secret"],
      [{ type: "WEBHOOK", url: r.url, secret: `whsec_${btoa("short")}` }, "secret"],
      [{ type: "SLACK", url: r.url, secret: `whsec_${btoa("k".repeat(32))}` }, "secret"],
      [{ type: "WEBHOOK", url: r.url, events: ["incident.reopened"] }, "events"],
      [{ type: "WEBHOOK", url: r.url, events: [] }, "events"],
      [{ type: "WEBHOOK", url: r.url, min_severity: "CRITICAL" }, "min_severity"],
      [{ type: "WEBHOOK", url: r.url, project_ids: [999_999] }, "project_ids"],
      [{ type: "WEBHOOK", url: r.url, color: "red" }, ""],
    ];
    for (const [body, field] of cases) {
      const res = await createChannel(tenant, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      if (field) expect(JSON.stringify(res.body.errors), JSON.stringify(body)).toContain(field);
    }
    expect((await call("GET", channelsPath(tenant), { as: admin })).body).toEqual([]);
  });

  it("deployed, refuses plain http and private or loopback receivers", async () => {
    const tenant = await createTenant();
    await asDeployed(async () => {
      for (const url of [
        "http://hooks.example.com/dq",
        "https://127.0.0.1/hook",
        "https://10.0.0.8/hook",
        "https://169.254.169.254/latest",
        "https://localhost/x",
      ]) {
        const res = await createChannel(tenant, { type: "WEBHOOK", url });
        expect(res.status, url).toBe(400);
        expect(res.body.errors[0].path).toContain("url");
      }
      const ok = await createChannel(tenant, { type: "WEBHOOK", url: "https://hooks.example.com/dq" });
      expect(ok.status).toBe(201);
    });
  });

  it("refuses another tenant's project (400), a 51st channel (409) and a taken name (409), writing nothing", async () => {
    const tenant = await createTenant();
    const ownProject = await createProject(tenant);
    const theirProject = await createProject(await createTenant());
    const r = await receiver();
    const foreign = await createChannel(tenant, { type: "SLACK", url: r.url, project_ids: [ownProject, theirProject] });
    expect(foreign.status).toBe(400);
    expect(foreign.body.errors).toEqual([
      { path: "body.project_ids", message: `no such project in this tenant: ${theirProject}` },
    ]);
    const list = () => call("GET", channelsPath(tenant), { as: admin });
    expect((await list()).body).toEqual([]);
    // The same name twice in the list is one project.
    const mine = await createChannel(tenant, {
      name: "taken",
      type: "SLACK",
      url: r.url,
      project_ids: [ownProject, ownProject],
    });
    expect(mine.status).toBe(201);
    for (let i = 1; i < 50; i++) expect((await createChannel(tenant, { type: "SLACK", url: r.url })).status).toBe(201);
    const full = await createChannel(tenant, { type: "SLACK", url: r.url });
    expect(full.status).toBe(409);
    expect(full.body.detail).toBe("A tenant has at most 50 notification channels");
    // A full tenant answers that first, as a project that is not the tenant's comes before both.
    expect((await createChannel(tenant, { name: "taken", type: "SLACK", url: r.url })).body.detail).toBe(
      "A tenant has at most 50 notification channels",
    );
    expect((await createChannel(tenant, { type: "SLACK", url: r.url, project_ids: [theirProject] })).status).toBe(400);
    expect((await list()).body).toHaveLength(50);
    // Room for one: the name is the one refusal left.
    await call("DELETE", `${channelsPath(tenant)}/${(await list()).body[1].id}`, { as: admin });
    const taken = await createChannel(tenant, { name: "taken", type: "SLACK", url: r.url });
    expect(taken.status).toBe(409);
    expect(taken.body.detail).toBe("A notification channel with this name already exists");
    const log = await call("GET", `/api/backend/${tenant}/audit`, { as: admin });
    const creates = log.body
      .filter((e: { method: string }) => e.method === "POST")
      .map((e: { status: number }) => e.status);
    expect(creates.filter((s: number) => s !== 201)).toEqual([409, 400, 409, 409, 400]);
  }, 60_000);

  it("refuses a duplicate name with 409; replaces, keeping the secret; deletes", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const r = await receiver();
    const first = await createChannel(tenant, { name: "ops", type: "WEBHOOK", url: r.url });
    expect(first.status).toBe(201);
    expect((await createChannel(tenant, { name: "ops", type: "WEBHOOK", url: r.url })).status).toBe(409);
    const path = `${channelsPath(tenant)}/${first.body.id}`;
    const put = await call("PUT", path, {
      as: admin,
      body: {
        name: "ops-2",
        type: "WEBHOOK",
        url: r.url,
        events: ["incident.closed"],
        min_severity: "HIGH",
        project_ids: [projectId],
      },
    });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({
      name: "ops-2",
      events: ["incident.closed"],
      min_severity: "HIGH",
      project_ids: [projectId],
    });
    expect(put.body.secret).toBeUndefined();
    // The kept secret still signs: the receiver verifies the test event with the first one.
    await r.trust(first.body.secret);
    const test = await call("POST", `${path}/test`, { as: admin });
    expect(test.body).toMatchObject({ delivered: true, status_code: 200 });
    const other = await createTenant();
    expect((await call("GET", `${channelsPath(other)}/${first.body.id}`, { as: admin })).status).toBe(404);
    expect((await call("DELETE", path, { as: admin })).status).toBe(200);
    expect((await call("GET", path, { as: admin })).status).toBe(404);
    expect((await call("DELETE", path, { as: admin })).status).toBe(404);
  });
});

describe("POST …/channels/{id}/test", () => {
  it("sends a signed channel.test the Standard Webhooks reference verifies, and logs it", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const made = await createChannel(tenant, { type: "WEBHOOK", url: r.url });
    await r.trust(made.body.secret);
    const res = await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: true, status_code: 200, error: null });
    const [seen] = await r.requests();
    expect(seen!.problems).toEqual([]);
    expect(seen!.verified).toBe(true);
    expect(seen!.headers["webhook-id"]).toBe(res.body.webhook_id);
    expect(seen!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(seen!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(60);
    const body = JSON.parse(seen!.body);
    expect(body).toMatchObject({ type: "channel.test", data: { channel: { id: made.body.id } } });
    const log = await call("GET", `${channelsPath(tenant)}/${made.body.id}/deliveries`, { as: admin });
    expect(log.body).toEqual([
      expect.objectContaining({
        id: res.body.webhook_id,
        event: "channel.test",
        status: "DELIVERED",
        attempts: 1,
        last_status_code: 200,
      }),
    ]);
  });

  it("a signature made with another secret does not verify at the receiver", async () => {
    const tenant = await createTenant();
    const r = await receiver("webhook", `whsec_${btoa("x".repeat(32))}`);
    const made = await createChannel(tenant, { type: "WEBHOOK", url: r.url });
    await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    const [seen] = await r.requests();
    expect(seen!.verified).toBe(false);
  });

  it("answers with the receiver's failure as a short excerpt, without the URL's secret parts", async () => {
    const tenant = await createTenant();
    const r = await receiver("slack");
    const made = await createChannel(tenant, { type: "SLACK", url: r.url });
    const slackPath = new URL(r.url).pathname;
    await r.script([{ status: 403, body: `invalid_token for ${slackPath} ${"x".repeat(1000)}` }]);
    const res = await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, status_code: 403 });
    expect(res.body.error.length).toBeLessThanOrEqual(300);
    expect(res.body.error).not.toContain(slackPath);
    const log = await call("GET", `${channelsPath(tenant)}/${made.body.id}/deliveries`, { as: admin });
    expect(log.body[0]).toMatchObject({ status: "FAILED", last_status_code: 403 });
    expect(JSON.stringify(log.body)).not.toContain(slackPath);
  });

  it("sends Slack a Block Kit message Slack accepts", async () => {
    const tenant = await createTenant();
    const r = await receiver("slack");
    const made = await createChannel(tenant, { type: "SLACK", url: r.url });
    const res = await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    expect(res.body).toMatchObject({ delivered: true, status_code: 200 });
    const [seen] = await r.requests();
    expect(seen!.problems).toEqual([]);
    expect(seen!.headers["webhook-signature"]).toBeUndefined();
  });

  it("a receiver that does not answer in time is reported, not waited for", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const made = await createChannel(tenant, { type: "WEBHOOK", url: r.url });
    await r.script([{ status: 200, delayMs: 12_000 }]);
    const res = await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    expect(res.body).toMatchObject({ delivered: false, status_code: null });
    expect(res.body.error).toMatch(/no answer within 10 s/);
  }, 30_000);
});

describe("the OpenAPI document", () => {
  it("documents every event's payload under webhooks, with the Standard Webhooks headers", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    const hooks = res.body.webhooks as Record<string, { post: any }>;
    expect(Object.keys(hooks).sort()).toEqual([
      "channel.test",
      "incident.closed",
      "incident.escalated",
      "incident.opened",
      "scan.failed",
    ]);
    const opened = hooks["incident.opened"]!.post;
    expect(opened.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual([
      "header:webhook-id",
      "header:webhook-signature",
      "header:webhook-timestamp",
    ]);
    expect(opened.requestBody.content["application/json"].schema.$ref).toBe(
      "#/components/schemas/IncidentEventPayload",
    );
    const schemas = res.body.components.schemas;
    expect(Object.keys(schemas.IncidentEventPayload.properties.data.properties).sort()).toEqual([
      "alerts",
      "asset",
      "closed_by",
      "incident",
      "link",
    ]);
  });
});

describe("a channel's URL is a credential (issue 42)", () => {
  const row = (id: number) =>
    env.DB.prepare("select * from notification_channels where id = ?").bind(id).first<Record<string, string>>();

  it("every read shows its scheme and host only; at rest it is sealed, only its host in clear", async () => {
    const tenant = await createTenant();
    const hook = await receiver();
    const slack = await receiver("slack");
    const made = [
      await createChannel(tenant, { type: "WEBHOOK", url: `${hook.url}?token=abc123secret` }),
      await createChannel(tenant, { type: "SLACK", url: slack.url }),
    ];
    const origin = new URL(hook.url).origin;
    const list = await call("GET", channelsPath(tenant), { as: admin });
    for (const res of made) {
      expect(res.status).toBe(201);
      expect(res.body.url).toBe(origin);
      const got = await call("GET", `${channelsPath(tenant)}/${res.body.id}`, { as: admin });
      expect(got.body.url).toBe(origin);
      const stored = await row(res.body.id);
      expect(stored!.url).toBe(origin);
      for (const secretPart of ["hooks/", "services/", "abc123secret", "XXXX"]) {
        expect(JSON.stringify(stored)).not.toContain(secretPart);
        expect(JSON.stringify(list.body)).not.toContain(secretPart);
      }
    }
    expect(list.body.map((c: { url: string }) => c.url)).toEqual([origin, origin]);
    // Deliveries still go to the whole URL.
    expect((await call("POST", `${channelsPath(tenant)}/${made[1]!.body.id}/test`, { as: admin })).body).toMatchObject({
      delivered: true,
    });
    expect(await slack.requests()).toHaveLength(1);
  });

  it("a replace keeps the stored URL when url is left out or sent back as read", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const made = await createChannel(tenant, { name: "ops", type: "WEBHOOK", url: r.url });
    await r.trust(made.body.secret);
    const path = `${channelsPath(tenant)}/${made.body.id}`;
    const read = (await call("GET", path, { as: admin })).body;
    const asRead = await call("PUT", path, {
      as: admin,
      body: { name: read.name, type: read.type, url: read.url, min_severity: "HIGH" },
    });
    expect(asRead.status).toBe(200);
    expect(asRead.body).toMatchObject({ url: new URL(r.url).origin, min_severity: "HIGH" });
    const leftOut = await call("PUT", path, { as: admin, body: { name: "ops-2", type: "WEBHOOK" } });
    expect(leftOut.status).toBe(200);
    const sent = await call("POST", `${path}/test`, { as: admin });
    expect(sent.body).toMatchObject({ delivered: true, status_code: 200 });
    const [seen] = await r.requests();
    expect(seen!.verified).toBe(true);
  });

  it("a new host needs the whole URL and, for a webhook, its secret again; nothing changes without it", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const made = await createChannel(tenant, { name: "ops", type: "WEBHOOK", url: r.url });
    const path = `${channelsPath(tenant)}/${made.body.id}`;
    const before = await row(made.body.id);
    // The same receiver under another host name: a new host.
    const moved = r.url.replace("127.0.0.1", "localhost");
    const refused = await call("PUT", path, { as: admin, body: { name: "ops", type: "WEBHOOK", url: moved } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ path: "body.secret", message: expect.stringMatching(/host changes/) }]);
    expect(await row(made.body.id)).toEqual(before);
    const secret = `whsec_${btoa("n".repeat(32))}`;
    await r.trust(secret);
    const ok = await call("PUT", path, { as: admin, body: { name: "ops", type: "WEBHOOK", url: moved, secret } });
    expect(ok.status).toBe(200);
    expect(ok.body.url).toBe(new URL(moved).origin);
    const sent = await call("POST", `${path}/test`, { as: admin });
    expect(sent.body).toMatchObject({ delivered: true });
    expect((await r.requests())[0]!.verified).toBe(true);
  });

  it("upgrades: rows stored before lose the path kept in clear, and still deliver", async () => {
    const tenant = await createTenant();
    const r = await receiver();
    const made = await createChannel(tenant, { type: "WEBHOOK", url: `${r.url}?x=1` });
    await r.trust(made.body.secret);
    // As the version before stored it: the URL with its path, query values masked.
    const old = `${r.url}?x=%E2%80%A6`;
    const setOld = () =>
      env.DB.prepare("update notification_channels set url = ? where id = ?").bind(old, made.body.id).run();
    await setOld();
    const migration = env.TEST_MIGRATIONS.find((m) => m.name.startsWith("0012_channel_url_host"));
    for (const query of migration!.queries) await env.DB.prepare(query).run();
    expect((await row(made.body.id))!.url).toBe(new URL(r.url).origin);
    // A row the version before writes after the migration ran is cut down when first read.
    await setOld();
    const list = await call("GET", channelsPath(tenant), { as: admin });
    expect(list.body[0].url).toBe(new URL(r.url).origin);
    expect((await row(made.body.id))!.url).toBe(new URL(r.url).origin);
    const sent = await call("POST", `${channelsPath(tenant)}/${made.body.id}/test`, { as: admin });
    expect(sent.body).toMatchObject({ delivered: true });
    // The receiver answers only at its whole URL (path included).
    expect(await r.requests()).toHaveLength(1);
  });
});
