import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BOOKMARK_HEADER, isBookmark, RequestSessions } from "../../src/db/sessions";
import { admin, call } from "../support/api";
import { createTenant } from "../support/tenants";

describe("D1 sessions and bookmarks", () => {
  it("hands out a bookmark with each answer that touched D1, and none with those that did not", async () => {
    const tenant = await createTenant();
    const read = await call("GET", `/api/backend/${tenant}/configuration/projects`, { as: admin });
    expect(read.status).toBe(200);
    expect(isBookmark(read.headers.get(BOOKMARK_HEADER) ?? "")).toBe(true);
    const health = await call("GET", "/health");
    expect(health.headers.get(BOOKMARK_HEADER)).toBeNull();
  });

  it("a write's bookmark is no older than the bookmark the client had, and a read from it sees the write", async () => {
    const tenant = await createTenant();
    const base = `/api/backend/${tenant}/configuration/projects`;
    const before = (await call("GET", base, { as: admin })).headers.get(BOOKMARK_HEADER)!;
    const created = await call("POST", base, { as: admin, body: { name: "orders" } });
    expect(created.status).toBe(201);
    const written = created.headers.get(BOOKMARK_HEADER)!;
    expect(isBookmark(written)).toBe(true);
    expect(written >= before).toBe(true);
    const after = await call("GET", `${base}/${created.body.id}`, {
      as: admin,
      headers: { [BOOKMARK_HEADER]: written },
    });
    expect(after.status).toBe(200);
    expect(after.body.name).toBe("orders");
    expect(after.headers.get(BOOKMARK_HEADER)! >= written).toBe(true);
  });

  it("refuses a bookmark it did not give out with a 400 naming the header, before any D1 call", async () => {
    const tenant = await createTenant();
    for (const bad of [
      "yesterday",
      "00000000-00000000-00000000",
      `${"0".repeat(8)}-${"0".repeat(8)}-${"0".repeat(8)}-XYZ`,
    ]) {
      const res = await call("GET", `/api/backend/${tenant}/configuration/projects`, {
        as: admin,
        headers: { [BOOKMARK_HEADER]: bad },
      });
      expect(res.status, bad).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(res.body.errors).toEqual([{ path: `header.${BOOKMARK_HEADER}`, message: expect.any(String) }]);
      expect(res.headers.get("server-timing")).toBeNull();
    }
    // An empty header is no bookmark: the read goes on.
    const empty = await call("GET", `/api/backend/${tenant}/configuration/projects`, {
      as: admin,
      headers: { [BOOKMARK_HEADER]: " " },
    });
    expect(empty.status).toBe(200);
  });

  it("a request's bookmark is the newest any of its sessions saw", async () => {
    const sessions = new RequestSessions(env.DB, "GET", undefined);
    expect(sessions.bookmark()).toBeUndefined();
    await sessions.main.prepare("select 1").all();
    const first = sessions.bookmark()!;
    expect(isBookmark(first)).toBe(true);
    // A write outside these sessions (as an AssetMonitor's), then a session from the primary sees it.
    await createTenant();
    const primary = sessions.fromPrimary();
    await primary.prepare("select 1").all();
    expect(primary.getBookmark()! > first).toBe(true);
    expect(sessions.bookmark()).toBe(primary.getBookmark());
  });
});
