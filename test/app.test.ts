import { createExecutionContext, SELF, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { createApp } from "../src/app";
import { admin, call } from "./support/api";

describe("HTTP foundation", () => {
  it("answers an unknown route with a 404 problem and a request id", async () => {
    const res = await call("GET", "/no/such/route", { as: admin });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(res.body).toMatchObject({ status: 404, code: "not_found", title: "Not found" });
    expect(res.headers.get("x-request-id")).toBeTruthy();
    expect(res.body.request_id).toBe(res.headers.get("x-request-id"));
  });

  it("turns an unexpected error into a 500 problem that leaks no stack, and logs it with the request id", async () => {
    const app = createApp();
    app.get("/boom", () => {
      throw new Error("db password=hunter2 at query.ts:42");
    });
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const ctx = createExecutionContext();
    const res = await app.request("/boom", {}, env, ctx);
    await waitOnExecutionContext(ctx);
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(JSON.parse(text)).toMatchObject({ status: 500, code: "internal_error" });
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("query.ts");
    expect(logged).toHaveBeenCalledWith(expect.stringContaining(res.headers.get("x-request-id")!));
    logged.mockRestore();
  });

  it("puts a request id on successful responses too", async () => {
    const res = await call("GET", "/health");
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("answers malformed JSON with a 400 problem and writes nothing", async () => {
    const res = await call("PUT", "/backend/private/configuration/tenants/malformed-json", {
      as: admin,
      raw: '{"name": "x",',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ status: 400, code: "malformed_json" });
    const after = await call("GET", "/backend/private/configuration/tenants/malformed-json", { as: admin });
    expect(after.status).toBe(404);
  });

  it("serves a valid OpenAPI 3.1 document", async () => {
    const res = await call("GET", "/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    expect(res.body.components.securitySchemes).toHaveProperty("ApiKey");
    expect(res.body.paths["/auth/{tenant}/apiKeys"].get.deprecated).toBe(true);
    // Domain schemas (plain zod with .meta ids) still become named components.
    for (const name of ["S3Payload", "GcpCredential", "ConnectionCredential", "CreateConnection"]) {
      expect(res.body.components.schemas).toHaveProperty(name);
    }
  });

  it("serves the interactive reference at /docs", async () => {
    const res = await call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect(res.body).toContain("/openapi.json");
    // The reference's script is our own static asset, so /docs renders without a CDN.
    expect(res.body).toContain('src="/docs/scalar.js"');
    const script = await call("GET", "/docs/scalar.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect(String(script.body)).toContain("createApiReference");
  });

  it("serves the dashboard's static files under /app/, built at install time", async () => {
    for (const path of ["/app", "/app/"]) {
      const page = await call("GET", path);
      expect(page.status, path).toBe(200);
      expect(page.headers.get("content-type")).toContain("text/html");
      expect(page.body).toContain('src="/app/app.js"');
    }
    const script = await call("GET", "/app/app.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toContain("javascript");
    expect((await call("GET", "/app/missing.js")).status).toBe(404);
  });

  it("serves its static files itself, with no static-assets router in front of the API", async () => {
    // No [assets] (wrangler.toml): the assets' router Worker would run before every request, the
    // API's included (issue 40, bench/api).
    expect("ASSETS" in env).toBe(false);
    for (const [path, type, text] of [
      ["/app/", "text/html", 'src="/app/app.js"'],
      ["/app/app.css", "text/css", "uplot"],
      ["/docs/scalar.js", "text/javascript", "createApiReference"],
    ] as const) {
      // Without gzip accepted: the content itself.
      const plain = await SELF.fetch(`https://dq.test${path}`);
      expect(plain.status, path).toBe(200);
      expect(plain.headers.get("content-type"), path).toContain(type);
      expect(plain.headers.get("content-encoding"), path).toBeNull();
      expect(plain.headers.get("cache-control"), path).toBe("public, max-age=0, must-revalidate");
      const content = await plain.text();
      expect(content, path).toContain(text);
      const etag = plain.headers.get("etag");
      expect(etag, path).toMatch(/^"[0-9a-f]{32}"$/);
      // Gzip accepted: the stored gzip, the same bytes once inflated.
      const gzipped = await SELF.fetch(`https://dq.test${path}`, { headers: { "Accept-Encoding": "gzip, br" } });
      expect(gzipped.status, path).toBe(200);
      expect(gzipped.headers.get("content-encoding"), path).toBe("gzip");
      expect(gzipped.headers.get("etag"), path).toBe(etag);
      expect(await gzipped.text(), path).toBe(content);
      // Revalidation: the ETag answers 304 without a body; another ETag gets the file.
      const again = await SELF.fetch(`https://dq.test${path}`, { headers: { "If-None-Match": `"other", ${etag}` } });
      expect(again.status, path).toBe(304);
      expect(await again.text(), path).toBe("");
      const other = await SELF.fetch(`https://dq.test${path}`, { headers: { "If-None-Match": '"other"' } });
      expect(other.status, path).toBe(200);
      await other.body?.cancel();
    }
    // Gzip refused (q=0): the content itself.
    const refused = await SELF.fetch("https://dq.test/app/app.css", { headers: { "Accept-Encoding": "gzip;q=0" } });
    expect(refused.headers.get("content-encoding")).toBeNull();
    expect(await refused.text()).toContain("uplot");
    // The page has one address, as the assets router gave it (a trailing slash, not index.html).
    const index = await SELF.fetch("https://dq.test/app/index.html", { redirect: "manual" });
    expect(index.status).toBe(301);
    expect(new URL(index.headers.get("location")!, "https://dq.test").pathname).toBe("/app/");
    // Only the files built: nothing else under the paths, and the API is not shadowed.
    expect((await call("GET", "/docs/other.js")).status).toBe(404);
    expect((await call("GET", "/app/app.js/x")).status).toBe(404);
  });
});

describe("the OpenAPI document, as client generators need it", () => {
  it("gives every operation a unique camelCase operationId, security, a tag that is described; names its server", async () => {
    const res = await call("GET", "/openapi.json");
    const doc = res.body as {
      servers: Array<{ url: string }>;
      tags: Array<{ name: string; description: string }>;
      paths: Record<string, Record<string, { operationId?: string; security?: unknown[]; tags?: string[] }>>;
      info: { license?: { name: string } };
    };
    expect(doc.servers[0]!.url).toMatch(/^https?:\/\//);
    expect(doc.info.license?.name).toBeTruthy();
    const described = new Set(doc.tags.filter((t) => t.description.length > 0).map((t) => t.name));
    const ids: string[] = [];
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        expect(op.operationId, where).toMatch(/^[a-z][a-zA-Z0-9]+$/);
        expect(Array.isArray(op.security), where).toBe(true);
        for (const tag of op.tags ?? []) expect(described.has(tag), `${where}: tag ${tag}`).toBe(true);
        ids.push(op.operationId!);
      }
    }
    expect(ids.length).toBeGreaterThan(80);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("has an example for every request body (redocly checks each against its schema)", async () => {
    const doc = (await call("GET", "/openapi.json")).body as {
      paths: Record<string, Record<string, { requestBody?: { content: Record<string, any> } }>>;
      components: { schemas: Record<string, { example?: unknown }> };
    };
    const without: string[] = [];
    let bodies = 0;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        for (const [type, media] of Object.entries(op.requestBody?.content ?? {})) {
          bodies += 1;
          const ref = media.schema?.$ref as string | undefined;
          const named = ref ? doc.components.schemas[ref.split("/").at(-1)!] : undefined;
          if (media.example === undefined && media.schema?.example === undefined && named?.example === undefined) {
            without.push(`${method.toUpperCase()} ${path} ${type}`);
          }
        }
      }
    }
    expect(bodies).toBeGreaterThan(40);
    expect(without).toEqual([]);
  });
});
