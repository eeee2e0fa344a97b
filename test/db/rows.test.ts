import { env } from "cloudflare:workers";
import { and, asc, eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { listProjectAssetsWithProject } from "../../src/catalog/assets";
import { createDb } from "../../src/db";
import { preparedOnce } from "../../src/db/prepared";
import { allRows } from "../../src/db/rows";
import { assets, connections, projectMembers, projects } from "../../src/db/schema";
import { seedAsset } from "../support/assets";
import { createProject, projectMember } from "../support/projects";
import { createTenant } from "../support/tenants";

/** Each prepared query's rows through allRows, against drizzle's own mapping (`all()`) of the same call. */
async function expectSameRows(query: Parameters<typeof allRows>[0], values: Record<string, unknown>) {
  const drizzle = await query.all(values);
  const ours = await allRows(query, values);
  expect(ours).toEqual(drizzle);
  // Twice: the second call uses the mapper built by the first.
  expect(await allRows(query, values)).toEqual(drizzle);
  return ours as Record<string, unknown>[];
}

describe("allRows: a prepared select's rows mapped as drizzle maps them", () => {
  it("maps a page of a project's assets with its project and membership (the read of GET …/assets) as all() does", async () => {
    const db = createDb(env.DB);
    const tenant = await createTenant();
    const full = await createProject(tenant);
    const empty = await createProject(tenant);
    const email = "rows-reader@example.com";
    await projectMember(tenant, full, email, "PROJECT_VIEWER");
    const first = await seedAsset(tenant, full);
    await seedAsset(tenant, full);
    // An asset of another type (its JSON columns and the connection's db_type decoded).
    await env.DB.prepare("update assets set attributes = ?1, schedule_enabled = 1 where id = ?2")
      .bind(JSON.stringify([{ name: "a", kind: "integer" }]), first.assetId)
      .run();
    await env.DB.prepare("update connections set db_type = 'postgres' where id = ?1").bind(first.connectionId).run();

    // The production query, as the route runs it, then read back by its key.
    const page = await listProjectAssetsWithProject(db, tenant, full, email, 10);
    expect(page?.assets.map((a) => a.id)).toHaveLength(2);
    expect(page?.assets[0]).toMatchObject({ attributes: [{ name: "a", kind: "integer" }], scheduleEnabled: true });
    expect(page?.assets[0]?.dbType).toBe("postgres");
    const query = preparedOnce(db, "assets.list.withProject.false", () => {
      throw new Error("built by listProjectAssetsWithProject");
    });
    const rows = await expectSameRows(query, { tenant, id: full, email, limit: 11 });
    expect(rows).toHaveLength(2);
    // No membership row (another caller): the scalar is null, the project still an object.
    const stranger = await expectSameRows(query, { tenant, id: full, email: "", limit: 11 });
    expect(stranger[0]).toMatchObject({ role: null, project: { id: full } });
    // A project without assets: the left-joined asset is null (drizzle's nullifying), not an object of nulls.
    const none = await expectSameRows(query, { tenant, id: empty, email, limit: 11 });
    expect(none).toEqual([expect.objectContaining({ asset: null, connectionId: null, project: expect.any(Object) })]);
    expect((await listProjectAssetsWithProject(db, tenant, empty, email, 10))?.assets).toEqual([]);
    // Another tenant's project: no rows.
    expect(await expectSameRows(query, { tenant: "nobody", id: full, email, limit: 11 })).toEqual([]);
  });

  it("maps inner and left joins, SQL fields with and without decoders, and aliases as all() does", async () => {
    const db = createDb(env.DB);
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const { assetId } = await seedAsset(tenant, projectId);
    const query = db
      .select({
        asset: { id: assets.id, options: assets.options, enabled: assets.scheduleEnabled },
        project: projects,
        member: { email: projectMembers.userEmail, role: projectMembers.role },
        connection: connections,
        doubled: sql<number>`${assets.id} * 2`.mapWith(Number),
        label: sql<string>`'x' || ${assets.name}`.as("label"),
        nothing: sql<null>`null`,
      })
      .from(assets)
      .innerJoin(projects, and(eq(projects.tenantId, assets.tenantId), eq(projects.id, assets.projectId)))
      .leftJoin(
        projectMembers,
        and(eq(projectMembers.projectId, projects.id), eq(projectMembers.userEmail, sql.placeholder("email"))),
      )
      .leftJoin(
        connections,
        and(eq(connections.id, assets.connectionId), eq(connections.name, sql.placeholder("connection"))),
      )
      .where(eq(assets.tenantId, sql.placeholder("tenant")))
      .orderBy(asc(assets.id))
      .prepare();
    const joined = await expectSameRows(query, { tenant, email: "", connection: "" });
    // The unmatched left joins are null objects; the inner-joined project is not.
    expect(joined).toEqual([
      expect.objectContaining({
        asset: { id: assetId, options: {}, enabled: false },
        member: null,
        connection: null,
        doubled: assetId * 2,
        nothing: null,
        project: expect.objectContaining({ id: projectId }),
      }),
    ]);
    const name = (await env.DB.prepare("select name from connections where tenant_id = ?1").bind(tenant).first<{
      name: string;
    }>())!.name;
    const matched = await expectSameRows(query, { tenant, email: "", connection: name });
    expect(matched[0]?.connection).toMatchObject({ name, payload: { bucket: "test-bucket" } });
  });

  it("leaves a relational query (its own mapper) to drizzle", async () => {
    const db = createDb(env.DB);
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const query = db.query.projects.findMany({ where: eq(projects.tenantId, sql.placeholder("tenant")) }).prepare();
    const rows = await expectSameRows(query, { tenant });
    expect(rows).toEqual([expect.objectContaining({ id: projectId, tenantId: tenant })]);
  });
});
