/**
 * Access before input (issue 42, point 1): every operation of the served OpenAPI document is
 * called by callers without access — another tenant's key, another tenant's admin, a member of
 * the tenant who views another project, a viewer of the project — with no input, a malformed JSON
 * body, and a body and query of the wrong shape. Each must get the status its lack of access
 * gives (404 for what it may not see, 403 for what it sees but may not do), never a 400 that
 * describes the route's input. The operations are read from /openapi.json, so a new route is
 * walked as soon as it exists; each must declare who may call it (`x-access`) or be public.
 *
 * So that a 404 here proves the check and not a missing resource, every path names real
 * resources of the tenant, and the same bad input from the tenant's own key is a 400.
 */

import { beforeAll, describe, expect, it } from "vitest";
import { type Credential, call, fillPath } from "../support/api";
import { createAsset } from "../support/assets";
import { createConnection } from "../support/connections";
import { seedIncident } from "../support/incidents";
import { createProject, projectMember } from "../support/projects";
import { receiver } from "../support/receivers";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

interface Operation {
  method: string;
  path: string;
  op: {
    operationId: string;
    security?: Record<string, string[]>[];
    parameters?: { name?: string; in?: string }[];
    requestBody?: { content?: Record<string, unknown> };
    "x-access"?: { of: string; role: string; parameter?: string };
  };
}

type Stranger = "otherTenantKey" | "otherTenantAdmin" | "viewerOfAnotherProject" | "viewerOfTheProject";

const METHODS = ["get", "post", "put", "patch", "delete"] as const;

/** The status `who` must get from an operation declaring `access`; undefined when `who` may call it. */
function expected(who: Stranger, access: { of: string; role: string }): 403 | 404 | undefined {
  const otherTenant = who === "otherTenantKey" || who === "otherTenantAdmin";
  switch (access.of) {
    case "platform":
      return 403;
    case "user":
      // A tenant-scoped key has no user identity; any user manages their own keys.
      return who === "otherTenantKey" ? 403 : undefined;
    case "tenant":
      if (otherTenant) return 404;
      return access.role === "TENANT_ADMIN" ? 403 : undefined;
    default:
      // A project, or its asset or incident: only members of that project see it.
      if (otherTenant || who === "viewerOfAnotherProject") return 404;
      return access.role === "PROJECT_VIEWER" ? undefined : 403;
  }
}

/**
 * Input that no operation accepts: none at all (required body fields and query parameters
 * missing), and a malformed JSON body with every query parameter of the wrong kind, an unknown
 * one and one that is not percent-encoded UTF-8.
 */
function badInputs(op: Operation["op"]): { what: string; query: string; raw?: string }[] {
  const queryNames = (op.parameters ?? []).filter((p) => p.in === "query" && p.name).map((p) => p.name!);
  const wrongQuery = [...queryNames.map((n) => `${encodeURIComponent(n)}=-1.5`), "bogus=%ff"].join("&");
  return [
    { what: "no input", query: "" },
    { what: "malformed JSON and query", query: `?${wrongQuery}`, raw: '{"' },
  ];
}

/** Runs `tasks` a few at a time (the requests are independent; in turn they take minutes). */
async function inParallel(tasks: (() => Promise<void>)[], width = 6): Promise<void> {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let task = queue.shift(); task; task = queue.shift()) await task();
    }),
  );
}

let operations: Operation[] = [];
let values: Record<string, string> = {};
let owner: Credential;
let strangers: Record<Stranger, Credential>;

beforeAll(async () => {
  const doc = (await call("GET", "/openapi.json")).body;
  operations = Object.entries(doc.paths as Record<string, Record<string, Operation["op"]>>).flatMap(([path, item]) =>
    METHODS.filter((m) => item[m]).map((m) => ({ method: m.toUpperCase(), path, op: item[m]! })),
  );

  const tenant = await createTenant();
  const other = await createTenant();
  owner = await tenantKey(tenant);
  const projectId = await createProject(tenant);
  const anotherProject = await createProject(tenant);
  const [viewer, outsider, otherAdmin] = ["viewer", "outsider", "otheradmin"].map((r) => `${unique(r)}@example.com`);
  await projectMember(tenant, projectId, viewer!, "PROJECT_VIEWER");
  await projectMember(tenant, anotherProject, outsider!, "PROJECT_VIEWER");
  await tenantMember(other, otherAdmin!, "TENANT_ADMIN");
  strangers = {
    otherTenantKey: await tenantKey(other),
    otherTenantAdmin: await userToken(otherAdmin!),
    viewerOfAnotherProject: await userToken(outsider!),
    viewerOfTheProject: await userToken(viewer!),
  };

  const connection = await createConnection(tenant, { projectId, type: "S3" });
  const asset = await createAsset(tenant, projectId, connection.id, {
    type: "S3",
    payload: { path: "in/*.csv", format: "csv" },
  });
  const incidentId = await seedIncident({ tenant, projectId, assetId: asset.id, connectionId: connection.id });
  const as = owner;
  const channel = await call("POST", `/api/backend/${tenant}/configuration/notifications/channels`, {
    as,
    body: { name: unique("ch"), type: "WEBHOOK", url: (await receiver()).url },
  });
  const template = await call("POST", `/${tenant}/configuration/integrations/tickets/template`, {
    as,
    body: {
      name: unique("tpl"),
      type: "JIRA",
      props: { jira_project_id: "10001", jira_issue_type_id: "10004", custom_fields: {} },
    },
  });
  const key = await call("POST", `/auth/${tenant}/apiKeys`, { as, body: { name: unique("k") } });
  for (const res of [channel, template, key]) expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);

  values = {
    tenant,
    tenantId: tenant,
    projectId: String(projectId),
    targetProjectId: String(projectId),
    assetId: String(asset.id),
    sourceID: String(asset.id),
    source_id: String(asset.id),
    source: String(asset.id),
    incidentId: String(incidentId),
    connectionId: String(connection.id),
    channelId: String(channel.body.id),
    templateId: String(template.body.id),
    keyId: key.body.id,
    // Jobs, groups and e-mails need not exist: their asset, project or tenant is what is checked.
    job_id: "job_none",
    jobId: "job_none",
    sourceGroupId: "1",
    email: viewer!,
  };
});

const pathOf = (template: string) => fillPath(template, values);

describe("every operation checks access before it reads its input", () => {
  it("declares who may call it, or is public", () => {
    expect(operations.length).toBeGreaterThan(90);
    const undeclared = operations.filter(
      ({ op }) => !op["x-access"] && !op.security?.some((requirement) => Object.keys(requirement).length === 0),
    );
    expect(undeclared.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });

  it("answers callers without access 404 (or 403) whatever input they send", { timeout: 300_000 }, async () => {
    const wrong: string[] = [];
    const tasks: (() => Promise<void>)[] = [];
    for (const { method, path, op } of operations) {
      const access = op["x-access"];
      if (!access) continue;
      const url = pathOf(path);
      for (const input of badInputs(op)) {
        for (const [who, as] of Object.entries(strangers) as [Stranger, Credential][]) {
          const status = expected(who, access);
          if (status === undefined) continue;
          const withBody = input.raw !== undefined && method !== "GET";
          tasks.push(async () => {
            const res = await call(method, url + input.query, { as, ...(withBody ? { raw: input.raw } : {}) });
            const code = status === 404 ? "not_found" : "forbidden";
            if (res.status !== status || res.body?.code !== code) {
              wrong.push(`${method} ${path} as ${who} with ${input.what}: ${res.status} ${JSON.stringify(res.body)}`);
            }
          });
        }
      }
    }
    expect(tasks.length).toBeGreaterThan(400);
    await inParallel(tasks);
    expect(wrong).toEqual([]);
  });

  it("answers the same malformed JSON from the tenant's own key with a 400 (the input is bad)", {
    timeout: 120_000,
  }, async () => {
    const wrong: string[] = [];
    const tasks = operations
      .filter(({ op }) => op["x-access"] && !["platform", "user"].includes(op["x-access"].of))
      .filter(({ op }) => op.requestBody?.content?.["application/json"])
      .map(({ method, path }) => async () => {
        const res = await call(method, pathOf(path), { as: owner, raw: '{"' });
        if (res.status !== 400) wrong.push(`${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      });
    expect(tasks.length).toBeGreaterThan(30);
    await inParallel(tasks);
    expect(wrong).toEqual([]);
  });
});
