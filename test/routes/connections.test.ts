import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import { connectionCreated, createConnectionStatement, openConnectionCredential } from "../../src/catalog/connections";
import { createDb } from "../../src/db";
import { secretBox } from "../../src/lib/crypto";
import { InvalidInputError } from "../../src/lib/errors";
import { admin, type Credential, call } from "../support/api";
import { createAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { type ConnectionTypeName, createConnection, FAKE_PEM, VALID_CONNECTIONS } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantMember } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const base = (t: string) => `/api/backend/${t}/configuration`;
const projectPath = (t: string, p: number) => `${base(t)}/projects/${p}/connections`;
const globalPath = (t: string) => `${base(t)}/connections`;
const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** Every credential value of the valid fixtures: none may ever appear in a response or in clear at rest. */
const SECRET_VALUES = [
  "redshift-pw-s3cr3t",
  "aws-secret-key-s3cr3t",
  "azure-sas-s3cr3t",
  "dapi-databricks-token-s3cr3t",
].concat(["jdbc-pw-s3cr3t", "iceberg-secret-s3cr3t", "snowflake-pw-s3cr3t", "testOnlyKey", "BEGIN PRIVATE KEY"]);

function expectNoSecret(value: unknown) {
  const text = JSON.stringify(value);
  for (const s of SECRET_VALUES) expect(text).not.toContain(s);
}

const paths = (body: { errors?: Array<{ path: string }> }) => (body.errors ?? []).map((e) => e.path);

function validBody(type: ConnectionTypeName = "S3") {
  return { name: unique("conn"), type, ...VALID_CONNECTIONS[type] };
}

async function rawRow(id: number) {
  return env.DB.prepare("select * from connections where id = ?").bind(id).first<Record<string, unknown>>();
}

/** The row as the domain code sees it, enough to open its credential. */
async function sealedOf(id: number) {
  const row = (await rawRow(id))!;
  return {
    id,
    tenantId: row.tenant_id as string,
    credentialType: row.credential_type as "SIMPLE",
    credentialSecret: row.credential_secret as string,
    sealId: row.seal_id as string | null,
  };
}

const box = () => secretBox(env.ENCRYPTION_KEYS);

describeAuthMatrix(
  "connections",
  async (w) => ({
    own: (await createConnection(w.tenant, { projectId: w.projectId })).id,
    global: (await createConnection(w.tenant, { global: true })).id,
  }),
  [
    {
      method: "POST",
      path: (w) => projectPath(w.tenant, w.projectId),
      body: () => validBody(),
      role: "PROJECT_EDITOR",
    },
    { method: "POST", path: (w) => globalPath(w.tenant), body: () => validBody(), role: "TENANT_ADMIN" },
    {
      method: "PUT",
      path: (w, x) => `${projectPath(w.tenant, w.projectId)}/${x.own}`,
      body: () => ({ name: unique("renamed") }),
      role: "PROJECT_EDITOR",
    },
    {
      method: "PUT",
      path: (w, x) => `${globalPath(w.tenant)}/${x.global}`,
      body: () => ({ name: unique("renamed") }),
      role: "TENANT_ADMIN",
    },
    { method: "GET", path: (w) => projectPath(w.tenant, w.projectId), role: "PROJECT_VIEWER" },
    { method: "GET", path: (w) => globalPath(w.tenant), role: "TENANT_MEMBER" },
    { method: "GET", path: (w, x) => `${projectPath(w.tenant, w.projectId)}/${x.own}`, role: "PROJECT_VIEWER" },
    { method: "GET", path: (w, x) => `${globalPath(w.tenant)}/${x.global}`, role: "TENANT_MEMBER" },
  ],
);

/** A tenant with a project and a user holding `role` in it. */
async function projectUser(role = "PROJECT_EDITOR") {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const email = `${unique("user")}@example.com`;
  await projectMember(tenant, projectId, email, role);
  return { tenant, projectId, email, as: await userToken(email) };
}

describe("connections: create", () => {
  it("creates a PROJECT connection with exactly the fields of 2.2 and never the credential", async () => {
    const { tenant, projectId, email, as } = await projectUser();
    const body = validBody("REDSHIFT");
    const res = await call("POST", projectPath(tenant, projectId), { as, body });
    expect(res.status).toBe(201);
    expect(res.body).toStrictEqual({
      id: expect.any(Number),
      project_id: projectId,
      name: body.name,
      scope: "PROJECT",
      created_by: email,
      created_at: expect.stringMatching(ISO_UTC),
      type: "REDSHIFT",
      payload: body.payload,
      db_type: "redshift",
    });
    expectNoSecret(res.body);
    const got = await call("GET", `${projectPath(tenant, projectId)}/${res.body.id}`, { as });
    expect(got.body).toStrictEqual(res.body);
  });

  it("creates a GLOBAL connection with project_id null", async () => {
    const tenant = await createTenant();
    const res = await call("POST", globalPath(tenant), { as: admin, body: validBody("GCS") });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ project_id: null, scope: "GLOBAL", created_by: "platform-admin", db_type: null });
    expectNoSecret(res.body);
  });

  const DB_TYPES: Record<ConnectionTypeName, string | null> = {
    REDSHIFT: "redshift",
    GCS: null,
    S3: null,
    AZURE: null,
    BIGQUERY: "bigquery",
    DELTALAKE: "databricks",
    GENERIC_JDBC: "postgresql",
    HIVE_ICEBERG: "iceberg",
    SNOWFLAKE: "snowflake",
  };

  it("accepts every connection type with its payload and credential, deriving db_type", async () => {
    const tenant = await createTenant();
    for (const type of Object.keys(VALID_CONNECTIONS) as ConnectionTypeName[]) {
      const body = validBody(type);
      const res = await call("POST", globalPath(tenant), { as: admin, body });
      expect(res.status, `${type}: ${JSON.stringify(res.body)}`).toBe(201);
      expect(res.body).toMatchObject({ type, payload: body.payload, db_type: DB_TYPES[type] });
      expectNoSecret(res.body);
    }
    const list = await call("GET", globalPath(tenant), { as: admin });
    expect(list.body.map((c: { type: string }) => c.type)).toEqual(Object.keys(VALID_CONNECTIONS));
    expectNoSecret(list.body);
  });

  it("accepts an Iceberg catalog on GCS or AZURE with the fitting credential, and a full GCP key file", async () => {
    const tenant = await createTenant();
    const iceberg = VALID_CONNECTIONS.HIVE_ICEBERG.payload;
    const gcs = await call("POST", globalPath(tenant), {
      as: admin,
      body: {
        ...validBody("HIVE_ICEBERG"),
        payload: { ...iceberg, location_type: "GCS" },
        credential: {
          type: "GCP",
          payload: {
            ...VALID_CONNECTIONS.GCS.credential.payload,
            type: "service_account",
            token_uri: "https://oauth2.googleapis.com/token",
          },
        },
      },
    });
    expect(gcs.status).toBe(201);
    const azure = await call("POST", globalPath(tenant), {
      as: admin,
      body: {
        ...validBody("HIVE_ICEBERG"),
        payload: { ...iceberg, location_type: "AZURE" },
        credential: VALID_CONNECTIONS.AZURE.credential,
      },
    });
    expect(azure.status).toBe(201);
  });

  it("refuses a credential type that does not fit the connection type, with its path", async () => {
    const tenant = await createTenant();
    const cases: Array<[string, unknown]> = [
      ["REDSHIFT with AWS", { ...validBody("REDSHIFT"), credential: VALID_CONNECTIONS.S3.credential }],
      ["GCS with SIMPLE", { ...validBody("GCS"), credential: VALID_CONNECTIONS.SNOWFLAKE.credential }],
      [
        "HIVE_ICEBERG on GCS with AWS",
        { ...validBody("HIVE_ICEBERG"), payload: { ...VALID_CONNECTIONS.HIVE_ICEBERG.payload, location_type: "GCS" } },
      ],
    ];
    for (const [what, body] of cases) {
      const res = await call("POST", globalPath(tenant), { as: admin, body });
      expect(res.status, what).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(paths(res.body), what).toEqual(["body.credential.type"]);
    }
    expect((await call("GET", globalPath(tenant), { as: admin })).body).toEqual([]);
  });

  it("validates payload and credential fields, listing every path, and writes nothing", async () => {
    const tenant = await createTenant();
    const gcs = validBody("GCS");
    const cases: Array<[string, unknown, string[]]> = [
      [
        "private key not PEM",
        { ...gcs, credential: { type: "GCP", payload: { ...gcs.credential.payload, private_key: "not a key" } } },
        ["body.credential.payload.private_key"],
      ],
      [
        "client_email not an e-mail",
        { ...gcs, credential: { type: "GCP", payload: { ...gcs.credential.payload, client_email: "nope" } } },
        ["body.credential.payload.client_email"],
      ],
      [
        "RSA PEM instead of PKCS#8",
        {
          ...gcs,
          credential: {
            type: "GCP",
            payload: { ...gcs.credential.payload, private_key: FAKE_PEM.replaceAll("PRIVATE KEY", "RSA PRIVATE KEY") },
          },
        },
        ["body.credential.payload.private_key"],
      ],
      [
        "JDBC url with malformed percent-encoding",
        {
          ...validBody("GENERIC_JDBC"),
          payload: {
            ...VALID_CONNECTIONS.GENERIC_JDBC.payload,
            connection_properties: { url: "jdbc:postgresql://db.example.com:5432/%ff" },
          },
        },
        ["body.payload.connection_properties.url"],
      ],
      [
        "bad thrift_uri",
        {
          ...validBody("HIVE_ICEBERG"),
          payload: { ...VALID_CONNECTIONS.HIVE_ICEBERG.payload, thrift_uri: "http://metastore:9083" },
        },
        ["body.payload.thrift_uri"],
      ],
      [
        "thrift_uri without port",
        {
          ...validBody("HIVE_ICEBERG"),
          payload: { ...VALID_CONNECTIONS.HIVE_ICEBERG.payload, thrift_uri: "thrift://metastore" },
        },
        ["body.payload.thrift_uri"],
      ],
      [
        "unknown JDBC db_type",
        { ...validBody("GENERIC_JDBC"), payload: { ...VALID_CONNECTIONS.GENERIC_JDBC.payload, db_type: "db2" } },
        ["body.payload.db_type"],
      ],
      [
        "DELTALAKE port not a port",
        { ...validBody("DELTALAKE"), payload: { host: "h", port: "http", httppath: "/p" } },
        ["body.payload.port"],
      ],
      ["unknown payload field", { ...gcs, payload: { bucket: "b", region: "x" } }, ["body.payload"]],
      ["missing bucket", { ...gcs, payload: {} }, ["body.payload.bucket"]],
      ["unknown type", { ...gcs, type: "ORACLE" }, ["body.type"]],
      ["unknown credential type", { ...gcs, credential: { type: "KERBEROS", payload: {} } }, ["body.credential.type"]],
      [
        "SIMPLE without password",
        { ...validBody("SNOWFLAKE"), credential: { type: "SIMPLE", payload: { username: "u" } } },
        ["body.credential.payload.password"],
      ],
      [
        "GENERIC_MAP with a non-string value",
        { ...validBody("GENERIC_JDBC"), credential: { type: "GENERIC_MAP", payload: { port: 5432 } } },
        ["body.credential.payload.port"],
      ],
      ["no name, no credential", { type: "S3", payload: { bucket: "b" } }, ["body.name", "body.credential"]],
    ];
    for (const [what, body, expected] of cases) {
      const res = await call("POST", globalPath(tenant), { as: admin, body });
      expect(res.status, what).toBe(400);
      expect(paths(res.body), what).toEqual(expect.arrayContaining(expected));
      expectNoSecret(res.body);
    }
    expect((await call("GET", globalPath(tenant), { as: admin })).body).toEqual([]);
  });

  it("refuses a duplicate name within a scope with 409, allows it in another scope", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const name = unique("shared");
    await createConnection(tenant, { projectId, name });
    const dup = await call("POST", projectPath(tenant, projectId), { as: admin, body: { ...validBody(), name } });
    expect(dup.status).toBe(409);
    expect((await call("POST", globalPath(tenant), { as: admin, body: { ...validBody(), name } })).status).toBe(201);
  });

  it("gives concurrent creates distinct ids, each with its own openable credential", async () => {
    const tenant = await createTenant();
    const bodies = Array.from({ length: 8 }, (_, i) => ({
      ...validBody("DELTALAKE"),
      credential: { type: "TOKEN", payload: { token: `token-${i}` } },
    }));
    const created = await Promise.all(bodies.map((body) => call("POST", globalPath(tenant), { as: admin, body })));
    expect(created.map((r) => r.status)).toEqual(bodies.map(() => 201));
    const ids = created.map((r) => r.body.id as number);
    expect(new Set(ids).size).toBe(ids.length);
    for (const [i, id] of ids.entries()) {
      expect(await openConnectionCredential(box(), await sealedOf(id))).toEqual(bodies[i]!.credential);
    }
  });
});

describe("connections: visibility", () => {
  it("keeps a project's connection to that project; shows GLOBAL ones in every project", async () => {
    const tenant = await createTenant();
    const a = await createProject(tenant);
    const b = await createProject(tenant);
    const ofA = await createConnection(tenant, { projectId: a });
    const ofB = await createConnection(tenant, { projectId: b });
    const global = await createConnection(tenant, { global: true });

    const email = `${unique("b-viewer")}@example.com`;
    await projectMember(tenant, b, email, "PROJECT_VIEWER");
    const bViewer = await userToken(email);

    // From project B's path: A's connection does not exist.
    expect((await call("GET", `${projectPath(tenant, b)}/${ofA.id}`, { as: admin })).status).toBe(404);
    expect((await call("PUT", `${projectPath(tenant, b)}/${ofA.id}`, { as: admin, body: { name: "x" } })).status).toBe(
      404,
    );
    const listB = await call("GET", projectPath(tenant, b), { as: bViewer });
    expect(listB.body.map((c: { id: number }) => c.id)).toEqual([ofB.id, global.id]);
    const listA = await call("GET", projectPath(tenant, a), { as: admin });
    expect(listA.body.map((c: { id: number }) => c.id)).toEqual([ofA.id, global.id]);
    for (const p of [a, b]) {
      const res = await call("GET", `${projectPath(tenant, p)}/${global.id}`, { as: admin });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ id: global.id, scope: "GLOBAL", project_id: null });
    }

    // The tenant-wide path: a user sees GLOBAL ones and those of their projects only.
    const wide = await call("GET", globalPath(tenant), { as: bViewer });
    expect(wide.body.map((c: { id: number }) => c.id)).toEqual([ofB.id, global.id]);
    expect((await call("GET", `${globalPath(tenant)}/${ofA.id}`, { as: bViewer })).status).toBe(404);
    expect((await call("GET", `${globalPath(tenant)}/${ofB.id}`, { as: bViewer })).status).toBe(200);
    expect((await call("GET", `${globalPath(tenant)}/${global.id}`, { as: bViewer })).status).toBe(200);
    const all = await call("GET", globalPath(tenant), { as: admin });
    expect(all.body.map((c: { id: number }) => c.id)).toEqual([ofA.id, ofB.id, global.id]);

    // A tenant member in no project sees the GLOBAL ones only.
    const loner = `${unique("loner")}@example.com`;
    await tenantMember(tenant, loner, "TENANT_MEMBER");
    const lonerList = await call("GET", globalPath(tenant), { as: await userToken(loner) });
    expect(lonerList.body.map((c: { id: number }) => c.id)).toEqual([global.id]);
  });

  it("answers 404 for another tenant's connection, whoever asks", async () => {
    const tenant = await createTenant();
    const other = await createTenant();
    const otherProject = await createProject(other);
    const theirs = await createConnection(other, { global: true });
    const theirsInProject = await createConnection(other, { projectId: otherProject });
    expect((await call("GET", `${globalPath(tenant)}/${theirs.id}`, { as: admin })).status).toBe(404);
    expect((await call("PUT", `${globalPath(tenant)}/${theirs.id}`, { as: admin, body: { name: "x" } })).status).toBe(
      404,
    );
    const project = await createProject(tenant);
    expect((await call("GET", `${projectPath(tenant, project)}/${theirs.id}`, { as: admin })).status).toBe(404);
    expect((await call("GET", `${projectPath(tenant, project)}/${theirsInProject.id}`, { as: admin })).status).toBe(
      404,
    );
    expect((await call("GET", globalPath(tenant), { as: admin })).body).toEqual([]);
  });
});

describe("connections: a stored credential goes only to the address it was entered for", () => {
  const jdbc = VALID_CONNECTIONS.GENERIC_JDBC.payload;
  const moves: Array<[ConnectionTypeName, Record<string, unknown>, string]> = [
    ["REDSHIFT", { endpoint_prefix: "evil.abc123.eu-west-1" }, "payload.endpoint_prefix"],
    ["REDSHIFT", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["GCS", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["S3", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["S3", { region: "eu-west-1" }, "payload.region"],
    ["AZURE", { storage_account: "evilstore" }, "payload.storage_account"],
    ["AZURE", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["BIGQUERY", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["DELTALAKE", { host: "evil.example.com" }, "payload.host"],
    ["DELTALAKE", { port: "8443" }, "payload.port"],
    ["DELTALAKE", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["SNOWFLAKE", { account: "evil-account" }, "payload.account"],
    ["SNOWFLAKE", { endpoint: "https://evil.example.com" }, "payload.endpoint"],
    ["HIVE_ICEBERG", { thrift_uri: "thrift://evil.example.com:9083" }, "payload.thrift_uri"],
    ["HIVE_ICEBERG", { bucket: "evil-bucket" }, "payload.bucket"],
    ["GENERIC_JDBC", { db_type: "mysql" }, "payload.db_type"],
    [
      "GENERIC_JDBC",
      { connection_properties: { ...jdbc.connection_properties, host: "evil.example.com" } },
      "payload.connection_properties.host",
    ],
    [
      "GENERIC_JDBC",
      { connection_properties: { ...jdbc.connection_properties, port: "6543" } },
      "payload.connection_properties.port",
    ],
    [
      "GENERIC_JDBC",
      { connection_properties: { ...jdbc.connection_properties, url: "jdbc:postgresql://evil.example.com/db" } },
      "payload.connection_properties.url",
    ],
    [
      "GENERIC_JDBC",
      { connection_properties: { ...jdbc.connection_properties, sslmode: "disable" } },
      "payload.connection_properties.sslmode",
    ],
  ];

  it.each(moves)("%s: a new %j needs the credential in the same request", async (type, change, field) => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type });
    const before = await rawRow(created.id);
    const payload = { ...VALID_CONNECTIONS[type].payload, ...change };
    const refused = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { payload } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([{ path: "body.credential", message: expect.stringContaining(field) }]);
    expect(await rawRow(created.id)).toEqual(before);

    const credential = VALID_CONNECTIONS[type].credential;
    const ok = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { payload, credential } });
    expect(ok.status).toBe(200);
    expect(ok.body.payload).toEqual(payload);
  });

  it.each([
    ["SNOWFLAKE", { warehouse: "BIG_WH", role: "READER", database: "DW" }],
    ["S3", { bucket: "other-bucket" }],
    ["AZURE", { bucket: "other-container" }],
    ["DELTALAKE", { httppath: "/sql/1.0/warehouses/other" }],
    [
      "GENERIC_JDBC",
      { db_or_schema: "sales", connection_properties: { ...jdbc.connection_properties, connect_timeout: "30" } },
    ],
  ] as Array<[ConnectionTypeName, Record<string, unknown>]>)(
    "%s: a change that keeps the address keeps the stored credential",
    async (type, change) => {
      const tenant = await createTenant();
      const created = await createConnection(tenant, { type });
      const payload = { ...VALID_CONNECTIONS[type].payload, ...change };
      const res = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { payload } });
      expect(res.status).toBe(200);
      expect(await openConnectionCredential(box(), await sealedOf(created.id))).toEqual(
        VALID_CONNECTIONS[type].credential,
      );
    },
  );

  it("deployed, a GCP credential's token_uri must be Google's (the JWT is signed with the private key)", async () => {
    const tenant = await createTenant();
    const gcp = VALID_CONNECTIONS.GCS.credential;
    const input = (token_uri: string) => ({
      name: unique("gcs"),
      type: "GCS" as const,
      payload: { bucket: "b" },
      credential: { type: "GCP" as const, payload: { ...gcp.payload, token_uri } },
    });
    const create = async (uri: string, allowPrivateTargets: boolean) => {
      const policy = { allowPrivateTargets };
      const db = createDb(env.DB);
      const { insert } = await createConnectionStatement(
        db,
        box(),
        tenant,
        null,
        input(uri),
        "t@example.com",
        policy,
        undefined,
      );
      return connectionCreated(await insert);
    };
    const refused = await create("https://evil.example.com/token", false).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(InvalidInputError);
    expect((refused as InvalidInputError).fields).toEqual([
      { field: "credential.payload.token_uri", message: "must be https://oauth2.googleapis.com/token" },
    ]);
    expect((await create("https://oauth2.googleapis.com/token", false)).type).toBe("GCS");
    // Local development and tests (ALLOW_PRIVATE_TARGETS) may use a token endpoint of their own.
    expect((await create("http://127.0.0.1:9/token", true)).type).toBe("GCS");
  });

  it("an editor cannot re-point an administrator's connection to their own server", async () => {
    const trap = inject("httpTrap").url;
    const box = unique("trap");
    const received = async () => (await (await fetch(`${trap}/__received/${box}`)).json()) as unknown[];
    const { tenant, projectId, as: editor } = await projectUser();
    const created = await createConnection(tenant, { projectId, type: "DELTALAKE", as: admin });
    const asset = await createAsset(tenant, projectId, created.id);
    const before = await rawRow(created.id);
    const payload = { ...VALID_CONNECTIONS.DELTALAKE.payload, endpoint: `${trap}/${box}` };
    const path = `${projectPath(tenant, projectId)}/${created.id}`;

    const refused = await call("PUT", path, { as: editor, body: { payload } });
    expect(refused.status).toBe(400);
    expect(paths(refused.body)).toEqual(["body.credential"]);
    expect(await rawRow(created.id)).toEqual(before);
    // The schema load still goes to the address the administrator entered, never to the trap.
    await call("POST", `/api/data/${tenant}/assets/${asset.id}/schema`, { as: editor });
    expect(await received()).toEqual([]);

    // With a credential of their own, the editor's server receives that one and nothing else.
    const credential = { type: "TOKEN", payload: { token: "dapi-the-editors-own-token" } };
    expect((await call("PUT", path, { as: editor, body: { payload, credential } })).status).toBe(200);
    await call("POST", `/api/data/${tenant}/assets/${asset.id}/schema`, { as: editor });
    const requests = (await received()) as Array<{ headers: Record<string, string> }>;
    expect(requests.length).toBeGreaterThan(0);
    expect(JSON.stringify(requests)).toContain("dapi-the-editors-own-token");
    expect(JSON.stringify(requests)).not.toContain("dapi-databricks-token-s3cr3t");
  });
});

describe("connections: update", () => {
  it("refuses a type or db_type change while assets use the connection (409 naming them); reads derive db_type", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const conn = await createConnection(tenant, { projectId, type: "GENERIC_JDBC" });
    const url = `${projectPath(tenant, projectId)}/${conn.id}`;
    const asset = await createAsset(tenant, projectId, conn.id, { type: "GENERIC_JDBC", payload: { table: "orders" } });
    expect(asset.db_type).toBe("postgresql");

    const { payload, credential } = VALID_CONNECTIONS.GENERIC_JDBC;
    const mysql = { ...payload, db_type: "mysql" };
    const retyped = await call("PUT", url, { as: admin, body: { payload: mysql, credential } });
    expect(retyped.status).toBe(409);
    expect(retyped.body.detail).toContain(String(asset.id));
    const snowflake = await call("PUT", url, {
      as: admin,
      body: { type: "SNOWFLAKE", ...VALID_CONNECTIONS.SNOWFLAKE },
    });
    expect(snowflake.status).toBe(409);
    expect((await call("GET", url, { as: admin })).body).toMatchObject({ type: "GENERIC_JDBC", db_type: "postgresql" });

    // Other changes stay allowed; without assets the type may change.
    const renamed = await call("PUT", url, { as: admin, body: { name: unique("renamed") } });
    expect(renamed.status).toBe(200);
    const assetUrl = `${base(tenant)}/projects/${projectId}/assets/${asset.id}`;
    expect((await call("DELETE", assetUrl, { as: admin })).status).toBe(200);
    const changed = await call("PUT", url, { as: admin, body: { payload: mysql, credential } });
    expect(changed.status).toBe(200);
    expect(changed.body.db_type).toBe("mysql");

    // An asset whose stored db_type went stale still reads its connection's.
    const again = await createAsset(tenant, projectId, conn.id, { type: "GENERIC_JDBC", payload: { table: "orders" } });
    await env.DB.prepare("update assets set db_type = 'postgresql' where id = ?").bind(again.id).run();
    const read = await call("GET", `${base(tenant)}/projects/${projectId}/assets/${again.id}`, { as: admin });
    expect(read.body.db_type).toBe("mysql");
  });

  it("changes only the fields sent and keeps the credential", async () => {
    const { tenant, projectId, as } = await projectUser();
    const created = await createConnection(tenant, { projectId, type: "SNOWFLAKE", as });
    const name = unique("renamed");
    const res = await call("PUT", `${projectPath(tenant, projectId)}/${created.id}`, { as, body: { name } });
    expect(res.status).toBe(200);
    expect(res.body).toStrictEqual({ ...created, name });
    expect(await openConnectionCredential(box(), await sealedOf(created.id))).toEqual(
      VALID_CONNECTIONS.SNOWFLAKE.credential,
    );

    const payload = { account: "acme-xy12345", warehouse: "BIG_WH", role: "READER" };
    const moved = await call("PUT", `${projectPath(tenant, projectId)}/${created.id}`, { as, body: { payload } });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ name, payload, type: "SNOWFLAKE", db_type: "snowflake" });
  });

  it("re-seals a new credential and refuses one of the wrong type", async () => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type: "DELTALAKE" });
    const before = await rawRow(created.id);
    const credential = { type: "TOKEN", payload: { token: "dapi-rotated-token" } };
    const res = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { credential } });
    expect(res.status).toBe(200);
    expectNoSecret(res.body);
    expect(JSON.stringify(res.body)).not.toContain("dapi-rotated-token");
    const after = await rawRow(created.id);
    expect(after!.credential_secret).not.toBe(before!.credential_secret);
    expect(await openConnectionCredential(box(), await sealedOf(created.id))).toEqual(credential);

    const wrong = await call("PUT", `${globalPath(tenant)}/${created.id}`, {
      as: admin,
      body: { credential: VALID_CONNECTIONS.S3.credential },
    });
    expect(wrong.status).toBe(400);
    expect(paths(wrong.body)).toEqual(["body.credential.type"]);
    expect(await rawRow(created.id)).toEqual(after);
  });

  it("checks a new payload against the stored type and writes nothing when it is invalid", async () => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type: "GCS" });
    const before = await rawRow(created.id);
    const res = await call("PUT", `${globalPath(tenant)}/${created.id}`, {
      as: admin,
      body: { name: unique("n"), payload: { endpoint_prefix: "x" } },
    });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(expect.arrayContaining(["body.payload.bucket", "body.payload"]));
    expect(await rawRow(created.id)).toEqual(before);
  });

  it("needs a payload and a credential for a type change, and then derives the new db_type", async () => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type: "S3" });
    const before = await rawRow(created.id);
    const bare = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { type: "BIGQUERY" } });
    expect(bare.status).toBe(400);
    expect(paths(bare.body)).toEqual(["body.payload", "body.credential"]);
    const noCredential = await call("PUT", `${globalPath(tenant)}/${created.id}`, {
      as: admin,
      body: { type: "BIGQUERY", payload: VALID_CONNECTIONS.BIGQUERY.payload },
    });
    expect(paths(noCredential.body)).toEqual(["body.credential"]);
    expect(await rawRow(created.id)).toEqual(before);

    const res = await call("PUT", `${globalPath(tenant)}/${created.id}`, {
      as: admin,
      body: { type: "BIGQUERY", ...VALID_CONNECTIONS.BIGQUERY },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      type: "BIGQUERY",
      payload: VALID_CONNECTIONS.BIGQUERY.payload,
      db_type: "bigquery",
    });
    expectNoSecret(res.body);
    expect(await openConnectionCredential(box(), await sealedOf(created.id))).toEqual(
      VALID_CONNECTIONS.BIGQUERY.credential,
    );
  });

  it("asks for a new credential when an Iceberg catalog moves to another store", async () => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type: "HIVE_ICEBERG" });
    const payload = { ...VALID_CONNECTIONS.HIVE_ICEBERG.payload, location_type: "AZURE" };
    const res = await call("PUT", `${globalPath(tenant)}/${created.id}`, { as: admin, body: { payload } });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(["body.credential"]);
    const ok = await call("PUT", `${globalPath(tenant)}/${created.id}`, {
      as: admin,
      body: { payload, credential: VALID_CONNECTIONS.AZURE.credential },
    });
    expect(ok.status).toBe(200);
    expect(ok.body.payload).toEqual(payload);
  });

  it("lets only a tenant admin change a GLOBAL connection from a project's path; refuses duplicate names", async () => {
    const { tenant, projectId, as } = await projectUser("PROJECT_EDITOR");
    const global = await createConnection(tenant, { global: true });
    const path = `${projectPath(tenant, projectId)}/${global.id}`;
    const refused = await call("PUT", path, { as, body: { name: unique("n") } });
    expect(refused.status).toBe(403);
    expect((await call("PUT", path, { as: admin, body: { name: unique("n") } })).status).toBe(200);

    const own = await createConnection(tenant, { projectId, as });
    const other = await createConnection(tenant, { projectId, as });
    const dup = await call("PUT", `${projectPath(tenant, projectId)}/${own.id}`, { as, body: { name: other.name } });
    expect(dup.status).toBe(409);
    // Renaming to its own name is no clash.
    expect(
      (await call("PUT", `${projectPath(tenant, projectId)}/${own.id}`, { as, body: { name: own.name } })).status,
    ).toBe(200);
  });
});

describe("connections: paging", () => {
  async function pageThrough(path: string, as: Credential) {
    const first = await call("GET", `${path}?limit=2`, { as });
    const link = first.headers.get("link");
    expect(link).toMatch(/^<\/api\/backend\/.+\/connections\?.*cursor=.+>; rel="next"$/);
    const next = await call("GET", link!.slice(1, link!.indexOf(">")), { as });
    expect(next.headers.get("link")).toBeNull();
    return [...first.body, ...next.body].map((c: { id: number }) => c.id);
  }

  it("pages both lists by id with a Link to the next page", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const ids = [
      (await createConnection(tenant, { projectId })).id,
      (await createConnection(tenant, { global: true })).id,
      (await createConnection(tenant, { projectId })).id,
    ];
    expect(await pageThrough(projectPath(tenant, projectId), admin)).toEqual(ids);
    expect(await pageThrough(globalPath(tenant), admin)).toEqual(ids);
    const bad = await call("GET", `${globalPath(tenant)}?cursor=garbage`, { as: admin });
    expect(bad.status).toBe(400);
  });
});

describe("connections: credentials at rest", () => {
  it("stores every credential sealed, bound to its row, and opens it again", async () => {
    const tenant = await createTenant();
    for (const type of Object.keys(VALID_CONNECTIONS) as ConnectionTypeName[]) {
      const created = await createConnection(tenant, { type });
      const row = await rawRow(created.id);
      const text = JSON.stringify(row);
      for (const s of SECRET_VALUES) expect(text, type).not.toContain(s);
      // The secret fields themselves (project_id or client_email may equal public payload values).
      const credential: Record<string, string> = VALID_CONNECTIONS[type].credential.payload;
      for (const key of ["password", "secret_key", "token", "sas_key", "private_key", "private_key_id"]) {
        if (credential[key]) expect(text, `${type}.${key}`).not.toContain(credential[key]);
      }
      expect(Object.keys(JSON.parse(row!.credential_secret as string)).sort()).toEqual(["ct", "iv", "kid"]);
      expect(await openConnectionCredential(box(), await sealedOf(created.id))).toEqual(
        VALID_CONNECTIONS[type].credential,
      );
    }
  });

  it("does not open a credential copied into another connection's row", async () => {
    const tenant = await createTenant();
    const a = await createConnection(tenant, { type: "S3" });
    const b = await createConnection(tenant, { type: "S3" });
    const sealedA = await sealedOf(a.id);
    const sealedB = await sealedOf(b.id);
    // Sealed before its row had an id: bound to the row's seal id, which no other row holds.
    expect(sealedA.sealId).toMatch(/^[0-9a-f-]{36}$/);
    await expect(openConnectionCredential(box(), { ...sealedA, id: b.id, sealId: sealedB.sealId })).rejects.toThrow();
    await expect(
      env.DB.prepare("update connections set seal_id = ? where id = ?").bind(sealedA.sealId, b.id).run(),
    ).rejects.toThrow(/UNIQUE constraint failed: connections.seal_id/);
    await expect(openConnectionCredential(box(), { ...sealedA, sealId: null })).rejects.toThrow();
    await expect(openConnectionCredential(box(), { ...sealedA, tenantId: "another-tenant" })).rejects.toThrow();
    await expect(openConnectionCredential(box(), { ...sealedA, credentialType: "TOKEN" })).rejects.toThrow();
  });

  it("opens a credential sealed for its row id, as before seal ids (seal_id null), and seals a new one for a seal id", async () => {
    const tenant = await createTenant();
    const created = await createConnection(tenant, { type: "S3" });
    const credential = VALID_CONNECTIONS.S3.credential;
    const legacy = JSON.stringify(await box().seal(credential, `connection:${tenant}:${created.id}`));
    await env.DB.prepare("update connections set credential_secret = ?, seal_id = null where id = ?")
      .bind(legacy, created.id)
      .run();
    const row = await sealedOf(created.id);
    expect(row.sealId).toBeNull();
    expect(await openConnectionCredential(box(), row)).toEqual(credential);
    await expect(openConnectionCredential(box(), { ...row, id: created.id + 1 })).rejects.toThrow();
    // A new credential is sealed for a new seal id.
    const res = await call("PUT", `/api/backend/${tenant}/configuration/connections/${created.id}`, {
      as: admin,
      body: { credential },
    });
    expect(res.status).toBe(200);
    const resealed = await sealedOf(created.id);
    expect(resealed.sealId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await openConnectionCredential(box(), resealed)).toEqual(credential);
  });
});

describe("connections: OpenAPI", () => {
  it("documents the eight operations under the Connections tag, with named schemas", async () => {
    const doc = (await call("GET", "/openapi.json")).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, { tags?: string[] }>>).flatMap(([p, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.tags?.includes("Connections"))
        .map(([method]) => `${method.toUpperCase()} ${p}`),
    );
    const t = "/api/backend/{tenant}/configuration";
    expect(ops.sort()).toEqual(
      [
        `GET ${t}/connections`,
        `GET ${t}/connections/{connectionId}`,
        `GET ${t}/projects/{projectId}/connections`,
        `GET ${t}/projects/{projectId}/connections/{connectionId}`,
        `POST ${t}/connections`,
        `POST ${t}/projects/{projectId}/connections`,
        `PUT ${t}/connections/{connectionId}`,
        `PUT ${t}/projects/{projectId}/connections/{connectionId}`,
      ].sort(),
    );
    for (const name of [
      "Connection",
      "CreateConnection",
      "UpdateConnection",
      "ConnectionCredential",
      "GcpCredential",
    ]) {
      expect(doc.components.schemas[name], name).toBeDefined();
    }
    expect(JSON.stringify(doc.components.schemas.Connection)).not.toContain("credential_secret");
  });
});

describe("connections: OpenAPI, what each payload and credential field means", () => {
  type JsonSchema = { description?: string; properties?: Record<string, JsonSchema>; additionalProperties?: unknown };
  const schemas = async () =>
    (await call("GET", "/openapi.json")).body.components.schemas as Record<string, JsonSchema>;

  it("describes every field of every connection payload and credential", async () => {
    const all = await schemas();
    // The payload and credential schemas a connection is created with, by their references.
    const refs = (value: unknown): string[] =>
      JSON.stringify(value)
        .match(/#\/components\/schemas\/\w+/g)!
        .map((r) => r.split("/").pop()!);
    const names = [...new Set([...refs(all.CreateConnection), ...refs(all.ConnectionCredential)])].filter((n) =>
      /(Payload|Credential)$/.test(n),
    );
    expect(names.length).toBeGreaterThanOrEqual(15);
    const undescribed = names.flatMap((name) =>
      Object.entries(all[name]!.properties ?? {})
        .filter(([, property]) => !property.description)
        .map(([field]) => `${name}.${field}`),
    );
    expect(undescribed).toEqual([]);
  });

  it("lists the JDBC connection properties a scan reads, ssl among them with disable explained", async () => {
    const props = (await schemas()).GenericJdbcPayload!.properties!.connection_properties!;
    expect(Object.keys(props.properties ?? {})).toEqual(
      expect.arrayContaining(["host", "port", "database", "url", "ssl", "sslmode", "connect_timeout", "schema"]),
    );
    expect(props.properties!.ssl!.description).toMatch(/disable.*plain TCP/);
    expect(props.properties!.ssl!.description).toContain("local PostgreSQL");
    // Custom parameters stay allowed.
    expect(props.additionalProperties).toEqual({ type: "string", maxLength: 4096 });
  });

  it("still keeps custom JDBC properties and refuses a property name over 256 characters", async () => {
    const tenant = await createTenant();
    const base = VALID_CONNECTIONS.GENERIC_JDBC.payload;
    const custom = { ...base, connection_properties: { ...base.connection_properties, ApplicationName: "dq" } };
    const ok = await call("POST", globalPath(tenant), {
      as: admin,
      body: { ...validBody("GENERIC_JDBC"), payload: custom },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.payload.connection_properties).toEqual(custom.connection_properties);
    const long = { ...base, connection_properties: { ["x".repeat(257)]: "1" } };
    const refused = await call("POST", globalPath(tenant), {
      as: admin,
      body: { ...validBody("GENERIC_JDBC"), payload: long },
    });
    expect(refused.status).toBe(400);
    expect(paths(refused.body)).toEqual([`body.payload.connection_properties.${"x".repeat(257)}`]);
  });
});
