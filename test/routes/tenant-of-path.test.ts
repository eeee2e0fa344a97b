/**
 * Every route of the OpenAPI document runs on the database of the tenant its path names
 * (src/routes/tenant-of-path.ts, src/db/shards.ts): a route that names a tenant is read as naming
 * it, one that names none as naming none. A new route of another shape fails here.
 */

import { describe, expect, it } from "vitest";
import { tenantOfPath } from "../../src/routes/tenant-of-path";
import { call } from "../support/api";

describe("the tenant of a request's path", () => {
  it("is the {tenant} (or {tenantId}) of every route that has one, and none for the others", async () => {
    const doc = (await call("GET", "/openapi.json")).body as { paths: Record<string, unknown> };
    const paths = Object.keys(doc.paths);
    expect(paths.length).toBeGreaterThan(50);
    for (const template of paths) {
      const path = template.replace(/\{([^}]+)\}/g, (_, name: string) =>
        name === "tenant" || name === "tenantId" ? "acme-co" : name === "email" ? "a%40b.example" : "7",
      );
      const names = /\{tenant(Id)?\}/.test(template);
      expect(tenantOfPath(path), template).toBe(names ? "acme-co" : undefined);
    }
  });

  it("names no tenant where the segment cannot be one (the route's validator answers that)", () => {
    expect(tenantOfPath("/api/backend/Bad_Id/configuration/projects")).toBeUndefined();
    expect(tenantOfPath("/api/backend/%E0%A4%A/configuration/projects")).toBeUndefined();
    expect(tenantOfPath("/auth/api_keys/k1")).toBeUndefined();
    expect(tenantOfPath("/api/callbacks/scans/job-1")).toBeUndefined();
  });
});
