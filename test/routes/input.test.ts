import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MAX_JSON_BODY_BYTES, MAX_JSON_DEPTH } from "../../src/lib/input";
import { ADMIN_KEY, admin, call } from "../support/api";
import { csvAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject } from "../support/projects";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const fileAsset = () => csvAsset();

/** Every route that queues a scan from a JSON body naming a path. */
const uploadRoutes = (tenant: string, assetId: number) => [
  `/api/backend/${tenant}/configuration/assets/${assetId}/scans`,
  `/v2/${tenant}/sources/${assetId}/batch_data`,
  `/api/data/${tenant}/sources/${assetId}/batch_data`,
  `/api/data/v2/${tenant}/sources/${assetId}/batch_data`,
  `/api/data/${tenant}/batch_data?source_id=${assetId}`,
  `/api/data/v2/${tenant}/batch_data?source_id=${assetId}`,
];

const paths = (body: { errors?: Array<{ path: string }> }) => (body.errors ?? []).map((e) => e.path);

async function jobsOf(tenant: string, assetId: number) {
  return (await call("GET", `/api/backend/${tenant}/configuration/assets/${assetId}/scans`, { as: admin })).body;
}

/** `n` arrays, one inside the other. */
const nested = (n: number) => `${"[".repeat(n)}${"]".repeat(n)}`;

describe("strings are well-formed UTF-16, or 400", () => {
  it("refuses a lone surrogate in a JSON string on every upload route, naming the field, queueing nothing", async () => {
    const { tenant, asset } = await fileAsset();
    for (const path of uploadRoutes(tenant, asset.id)) {
      for (const lone of ["\\ud800", "x\\udfff", "\\udc00\\ud800"]) {
        const res = await call("POST", path, { as: admin, raw: `{"location":"S3","path":"in/${lone}.csv"}` });
        expect(res.status, `${path} ${lone}`).toBe(400);
        expect(res.headers.get("content-type")).toBe("application/problem+json");
        expect(res.body.errors).toEqual([
          { path: "body.path", message: expect.stringMatching(/lone UTF-16 surrogate/) },
        ]);
      }
    }
    expect(await jobsOf(tenant, asset.id)).toEqual([]);
    // A surrogate pair is one character, and fine.
    const pair = await call("POST", uploadRoutes(tenant, asset.id)[0]!, {
      as: admin,
      raw: '{"path":"in/\\ud83d\\ude00.csv"}',
    });
    expect(pair.status).toBe(202);
  });

  it("refuses a lone surrogate in a key or deep in a value, naming its path; the asset is not written", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId, type: "S3" });
    const name = unique("asset");
    const raw = `{"name":"${name}","type":"S3","connection_id":${connection},"payload":{"path":"a/\\udbff","format":"csv"},"options":{"x\\ud800":"1"}}`;
    const res = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/assets`, {
      as: admin,
      raw,
    });
    expect(res.status).toBe(400);
    expect(paths(res.body)).toEqual(["body.payload.path", "body.options.x\uFFFD"]);
    const rows = await env.DB.prepare("select count(*) as n from assets where tenant_id = ?")
      .bind(tenant)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
  });

  it("refuses a path or query that is not percent-encoded UTF-8, naming the parameter", async () => {
    const { tenant, asset } = await fileAsset();
    const cases: Array<[string, string]> = [
      [`/v2/${tenant}/sources/%ff/batch_data`, "path.source_id"],
      // A surrogate spelt in UTF-8 (CESU) is not UTF-8.
      [`/v2/${tenant}/sources/%ED%A0%80/batch_data`, "path.source_id"],
      [`/v2/${tenant}%e9/sources/${asset.id}/batch_data`, "path.tenant"],
      [`/v2/${tenant}/sources/${asset.id}/batch_data?delimiter=%ff`, "query.delimiter"],
      [`/api/data/${tenant}/batch_data?source_id=${asset.id}&x%=1`, "query.x%"],
      [`/api/backend/${tenant}/configuration/assets/${asset.id}/scans?limit=%c3`, "query.limit"],
    ];
    for (const [path, field] of cases) {
      const res = await call("POST", path, { as: admin, body: { location: "S3" } });
      expect(res.status, path).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(paths(res.body), path).toEqual([field]);
    }
    // An unknown route with a bad escape is a 400 too, naming the path as a whole.
    const unknown = await call("GET", "/nowhere/%zz", { as: admin });
    expect(unknown.status).toBe(400);
    expect(paths(unknown.body)).toEqual(["path"]);
    expect(await jobsOf(tenant, asset.id)).toEqual([]);
    // Well-formed escapes are decoded as before.
    const ok = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data?delimiter=%3B`, {
      as: admin,
      body: { location: "S3" },
    });
    expect(ok.status).toBe(202);
  });
});

describe("JSON bodies: depth, size and encoding", () => {
  const templates = (tenant: string) => `/${tenant}/configuration/integrations/tickets/template`;
  const template = (customValue: string) =>
    `{"name":"${unique("tpl")}","type":"JIRA","props":{"jira_project_id":"1","jira_issue_type_id":"2","custom_fields":{"customfield_1":${customValue}}}}`;

  it(`refuses a body nested deeper than ${MAX_JSON_DEPTH} levels (a ticket template 10,000 deep), writing nothing`, async () => {
    const tenant = await createTenant();
    const deep = await call("POST", templates(tenant), { as: admin, raw: template(nested(10_000)) });
    expect(deep.status).toBe(400);
    expect(deep.body.errors).toEqual([
      {
        path: expect.stringMatching(/^body\.props\.custom_fields\.customfield_1(\.0)+$/),
        message: `nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
      },
    ]);
    // body, props and custom_fields are levels 1-3: customfield_1 may nest 29 arrays, not 30.
    const over = await call("POST", templates(tenant), { as: admin, raw: template(nested(MAX_JSON_DEPTH - 2)) });
    expect(over.status).toBe(400);
    expect((await call("GET", templates(tenant), { as: admin })).body).toEqual([]);
    const atLimit = await call("POST", templates(tenant), { as: admin, raw: template(nested(MAX_JSON_DEPTH - 3)) });
    expect(atLimit.status, JSON.stringify(atLimit.body)).toBe(201);
  });

  it(`refuses a JSON body over ${MAX_JSON_BODY_BYTES} bytes with 413, with or without a Content-Length`, async () => {
    const { tenant, asset } = await fileAsset();
    const path = `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`;
    const big = JSON.stringify({ query: "x".repeat(MAX_JSON_BODY_BYTES) });
    const sized = await call("POST", path, { as: admin, raw: big });
    expect(sized.status).toBe(413);
    expect(sized.body.code).toBe("payload_too_large");
    const bytes = new TextEncoder().encode(big);
    const chunked = await SELF.fetch(`https://dq.test${path}`, {
      method: "POST",
      headers: { "X-SVC-Key": ADMIN_KEY, "Content-Type": "application/json" },
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < bytes.byteLength; i += 64 * 1024) controller.enqueue(bytes.subarray(i, i + 64 * 1024));
          controller.close();
        },
      }),
    });
    expect(chunked.status).toBe(413);
    expect(await jobsOf(tenant, asset.id)).toEqual([]);
  });

  it("refuses a compressed JSON body with 415, and still reports malformed JSON as such", async () => {
    const { tenant, asset } = await fileAsset();
    const path = `/api/backend/${tenant}/configuration/assets/${asset.id}/scans`;
    const gz = await call("POST", path, { as: admin, raw: "{}", headers: { "Content-Encoding": "gzip" } });
    expect(gz.status).toBe(415);
    expect(gz.body.code).toBe("unsupported_media_type");
    const malformed = await call("POST", path, { as: admin, raw: '{"path": ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("malformed_json");
    expect(await jobsOf(tenant, asset.id)).toEqual([]);
  });
});
