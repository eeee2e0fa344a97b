import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { describeAuthMatrix } from "../support/auth-matrix";
import { createTenant, tenantKey, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (t: string) => `/${t}/configuration/integrations/tickets/template`;

const jira = (overrides: Record<string, unknown> = {}) => ({
  name: unique("tpl"),
  description: "Data incidents to the DQ board",
  type: "JIRA",
  props: {
    jira_project_id: "10001",
    jira_issue_type_id: "10004",
    custom_fields: {
      customfield_10010: "team-a",
      customfield_10011: 3,
      customfield_10012: true,
      customfield_10013: ["dq"],
      customfield_10014: { id: "42" },
    },
  },
  ...overrides,
});

async function create(tenant: string, as: Credential, body: unknown = jira()) {
  const res = await call("POST", base(tenant), { as, body });
  if (res.status !== 201) throw new Error(`create template: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

describeAuthMatrix("ticket templates", async (w) => ({ templateId: (await create(w.tenant, admin)).id as number }), [
  { method: "POST", path: (w) => base(w.tenant), body: () => jira(), role: "TENANT_ADMIN" },
  { method: "GET", path: (w) => base(w.tenant), role: "TENANT_MEMBER" },
  { method: "GET", path: (w, x) => `${base(w.tenant)}/${x.templateId}`, role: "TENANT_MEMBER" },
  {
    method: "PUT",
    path: (w, x) => `${base(w.tenant)}/${x.templateId}`,
    body: () => ({ name: unique("renamed"), jira_project_id: "1", jira_issue_type_id: "2", custom_fields: {} }),
    role: "TENANT_ADMIN",
  },
]);

describe("ticket templates", () => {
  it("creates a JIRA template and returns it whole, also by id and in the list", async () => {
    const tenant = await createTenant();
    const email = `${unique("admin")}@example.com`;
    await tenantMember(tenant, email, "TENANT_ADMIN");
    const as = await userToken(email);
    const body = jira();
    const res = await call("POST", base(tenant), { as, body });
    expect(res.status).toBe(201);
    const expected = {
      id: expect.any(Number),
      name: body.name,
      description: body.description,
      type: "JIRA",
      props: body.props,
      created_by: email,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      updated_at: expect.any(String),
    };
    expect(res.body).toEqual(expected);
    expect((await call("GET", `${base(tenant)}/${res.body.id}`, { as })).body).toEqual(res.body);
    expect((await call("GET", base(tenant), { as })).body).toEqual([res.body]);
  });

  it("defaults description to '' and custom_fields to {}", async () => {
    const tenant = await createTenant();
    const t = await create(tenant, admin, {
      name: "minimal",
      type: "JIRA",
      props: { jira_project_id: "1", jira_issue_type_id: "2" },
    });
    expect(t).toMatchObject({
      description: "",
      props: { jira_project_id: "1", jira_issue_type_id: "2", custom_fields: {} },
    });
  });

  it("lets any tenant member read templates", async () => {
    const tenant = await createTenant();
    const t = await create(tenant, admin);
    const email = `${unique("member")}@example.com`;
    await tenantMember(tenant, email, "TENANT_MEMBER");
    const as = await userToken(email);
    expect((await call("GET", `${base(tenant)}/${t.id}`, { as })).body).toEqual(t);
    expect((await call("GET", base(tenant), { as })).body).toEqual([t]);
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ["a type other than JIRA", { type: "SERVICENOW" }, "body.type"],
    ["no type", { type: undefined }, "body.type"],
    ["an empty name", { name: "" }, "body.name"],
    ["props without jira_project_id", { props: { jira_issue_type_id: "1" } }, "body.props.jira_project_id"],
    [
      "a numeric jira_issue_type_id",
      { props: { jira_project_id: "1", jira_issue_type_id: 7 } },
      "body.props.jira_issue_type_id",
    ],
    [
      "a null custom field",
      { props: { jira_project_id: "1", jira_issue_type_id: "2", custom_fields: { customfield_1: null } } },
      "body.props.custom_fields.customfield_1",
    ],
    [
      "a project id that is a key, not an id",
      { props: { jira_project_id: "DQ", jira_issue_type_id: "2" } },
      "body.props.jira_project_id",
    ],
    [
      "a project id with a sign",
      { props: { jira_project_id: "-1", jira_issue_type_id: "2" } },
      "body.props.jira_project_id",
    ],
    [
      "an issue type by name",
      { props: { jira_project_id: "1", jira_issue_type_id: "Bug" } },
      "body.props.jira_issue_type_id",
    ],
    // Custom fields are Jira's customfield_N: none may stand in for a field the service sets.
    ...["summary", "project", "description", "issuetype", "story_points", "customfield_", "customfield_1x"].map(
      (key): [string, Record<string, unknown>, string] => [
        `a custom field named ${key}`,
        {
          props: { jira_project_id: "1", jira_issue_type_id: "2", custom_fields: { customfield_1: "ok", [key]: "x" } },
        },
        `body.props.custom_fields.${key}`,
      ],
    ),
    ["an unknown prop", { props: { jira_project_id: "1", jira_issue_type_id: "2", board: "x" } }, "body.props"],
    ["an unknown field", { priority: "HIGH" }, "body"],
  ];
  for (const [what, overrides, field] of invalid) {
    it(`refuses ${what} with 400 naming ${field}, and creates nothing`, async () => {
      const tenant = await createTenant();
      const res = await call("POST", base(tenant), { as: admin, body: jira(overrides) });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
      expect((await call("GET", base(tenant), { as: admin })).body).toEqual([]);
    });
  }

  it("answers malformed JSON with 400", async () => {
    const tenant = await createTenant();
    const res = await call("POST", base(tenant), { as: admin, raw: '{"name": "x", "type": "JIRA"' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
    expect((await call("GET", base(tenant), { as: admin })).body).toEqual([]);
  });

  it("refuses a duplicate name with 409, in the same tenant only", async () => {
    const tenant = await createTenant();
    const first = await create(tenant, admin);
    const dup = await call("POST", base(tenant), { as: admin, body: jira({ name: first.name }) });
    expect(dup.status).toBe(409);
    expect(dup.body.code).toBe("conflict");
    expect((await call("GET", base(tenant), { as: admin })).body).toHaveLength(1);
    // Another tenant may use the name.
    await create(await createTenant(), admin, jira({ name: first.name }));
  });

  it("replaces a template with the flat PUT body of 4.9", async () => {
    const tenant = await createTenant();
    const t = await create(tenant, admin);
    const name = unique("renamed");
    const res = await call("PUT", `${base(tenant)}/${t.id}`, {
      as: admin,
      body: { name, jira_project_id: "20002", jira_issue_type_id: "3", custom_fields: { customfield_10020: "b" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...t,
      name,
      // Replaced whole: the omitted description is now empty.
      description: "",
      props: { jira_project_id: "20002", jira_issue_type_id: "3", custom_fields: { customfield_10020: "b" } },
      updated_at: expect.any(String),
    });
    expect(res.body.updated_at >= t.updated_at).toBe(true);
    expect((await call("GET", `${base(tenant)}/${t.id}`, { as: admin })).body).toEqual(res.body);
  });

  it("accepts the create shape (type and props) on PUT too, but not both shapes at once", async () => {
    const tenant = await createTenant();
    const t = await create(tenant, admin);
    const body = jira({ name: t.name, description: "kept name" });
    const res = await call("PUT", `${base(tenant)}/${t.id}`, { as: admin, body });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ name: t.name, description: "kept name", props: body.props });

    const mixed = await call("PUT", `${base(tenant)}/${t.id}`, {
      as: admin,
      body: { ...body, jira_project_id: "9" },
    });
    expect(mixed.status).toBe(400);
    expect(mixed.body.errors.map((e: { path: string }) => e.path)).toContain("body.jira_project_id");
  });

  it("refuses an invalid PUT with 400 naming the fields, and changes nothing", async () => {
    const tenant = await createTenant();
    const t = await create(tenant, admin);
    const cases: Array<[unknown, string[]]> = [
      [{ name: "x" }, ["body.jira_project_id", "body.jira_issue_type_id"]],
      [{ name: "x", jira_project_id: "1", jira_issue_type_id: "2", type: "GITHUB" }, ["body.type"]],
      [{ jira_project_id: "1", jira_issue_type_id: "2" }, ["body.name"]],
      [{ name: "x", jira_project_id: "1", jira_issue_type_id: "2", custom_fields: "a=b" }, ["body.custom_fields"]],
      [{ name: "x", jira_project_id: "PROJ", jira_issue_type_id: "2" }, ["body.jira_project_id"]],
      [
        { name: "x", jira_project_id: "1", jira_issue_type_id: "2", custom_fields: { summary: "x" } },
        ["body.custom_fields.summary"],
      ],
      [
        { name: "x", jira_project_id: "1", jira_issue_type_id: "2", custom_fields: { project: { id: "2" } } },
        ["body.custom_fields.project"],
      ],
      [
        { name: "x", props: { jira_project_id: "1", jira_issue_type_id: "2", custom_fields: { description: "x" } } },
        ["body.props.custom_fields.description"],
      ],
      [{ name: "x", props: { jira_project_id: "ABC", jira_issue_type_id: "2" } }, ["body.props.jira_project_id"]],
    ];
    for (const [body, fields] of cases) {
      const res = await call("PUT", `${base(tenant)}/${t.id}`, { as: admin, body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.errors.map((e: { path: string }) => e.path)).toEqual(expect.arrayContaining(fields));
    }
    expect((await call("GET", `${base(tenant)}/${t.id}`, { as: admin })).body).toEqual(t);
  });

  it("refuses renaming onto another template's name with 409; keeping its own name is fine", async () => {
    const tenant = await createTenant();
    const a = await create(tenant, admin);
    const b = await create(tenant, admin);
    const flat = { jira_project_id: "1", jira_issue_type_id: "2" };
    const clash = await call("PUT", `${base(tenant)}/${b.id}`, { as: admin, body: { name: a.name, ...flat } });
    expect(clash.status).toBe(409);
    expect((await call("GET", `${base(tenant)}/${b.id}`, { as: admin })).body).toEqual(b);
    const same = await call("PUT", `${base(tenant)}/${b.id}`, { as: admin, body: { name: b.name, ...flat } });
    expect(same.status).toBe(200);
  });

  it("is a 404 for an unknown template, and 400 for an id that is not one", async () => {
    const tenant = await createTenant();
    expect((await call("GET", `${base(tenant)}/999999`, { as: admin })).status).toBe(404);
    const put = await call("PUT", `${base(tenant)}/999999`, {
      as: admin,
      body: { name: "x", jira_project_id: "1", jira_issue_type_id: "2" },
    });
    expect(put.status).toBe(404);
    const bad = await call("GET", `${base(tenant)}/abc`, { as: admin });
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: { path: string }) => e.path)).toContain("path.templateId");
  });

  it("keeps tenants apart: another tenant's template is a 404 by id and absent from lists", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const t = await create(a, admin);
    const bKey = await tenantKey(b);
    // Through the other tenant's path: the template is not there.
    expect((await call("GET", `${base(b)}/${t.id}`, { as: bKey })).status).toBe(404);
    const put = await call("PUT", `${base(b)}/${t.id}`, {
      as: bKey,
      body: { name: "stolen", jira_project_id: "1", jira_issue_type_id: "2" },
    });
    expect(put.status).toBe(404);
    expect((await call("GET", base(b), { as: bKey })).body).toEqual([]);
    // Through the owner's path with the other tenant's key: the tenant is not there.
    expect((await call("GET", `${base(a)}/${t.id}`, { as: bKey })).status).toBe(404);
    expect((await call("GET", `${base(a)}/${t.id}`, { as: admin })).body).toEqual(t);
  });

  it("pages the list by id with a Link to the next page", async () => {
    const tenant = await createTenant();
    const ids = [(await create(tenant, admin)).id, (await create(tenant, admin)).id, (await create(tenant, admin)).id];
    const first = await call("GET", `${base(tenant)}?limit=2`, { as: admin });
    expect(first.body.map((t: { id: number }) => t.id)).toEqual(ids.slice(0, 2));
    const link = first.headers.get("link")!;
    expect(link).toMatch(/rel="next"$/);
    const next = await call("GET", link.slice(1, link.indexOf(">")), { as: admin });
    expect(next.body.map((t: { id: number }) => t.id)).toEqual(ids.slice(2));
    expect(next.headers.get("link")).toBeNull();
    expect((await call("GET", `${base(tenant)}?cursor=garbage`, { as: admin })).status).toBe(400);
  });
});

describe("ticket templates in the OpenAPI document", () => {
  it("documents both PUT shapes and the JIRA-only type", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const op = doc.paths["/{tenant}/configuration/integrations/tickets/template/{templateId}"].put;
    const ref: string = op.requestBody.content["application/json"].schema.$ref;
    const schema = doc.components.schemas[ref.split("/").pop()!];
    expect(Object.keys(schema.properties)).toEqual(
      expect.arrayContaining(["name", "jira_project_id", "jira_issue_type_id", "custom_fields", "props"]),
    );
    expect(doc.components.schemas.CreateTicketTemplate.properties.type).toMatchObject({ enum: ["JIRA"] });
  });
});
