/**
 * correctWrite (src/audit/audit-log.ts; decision 0014): a request whose batch recorded it and that
 * then answered otherwise is recorded with the answer it got, in place of the batch's record — a
 * row of its own gets the status, a tally it was last counted in counts it out — and one the batch
 * did not record is recorded as any request.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { type AuditWrite, correctWrite, recordWrite } from "../../src/audit/audit-log";
import { createDb } from "../../src/db";
import { unique } from "../support/unique";

const db = createDb(env.DB);

const write = (tenantId: string, requestId: string, tally: boolean): AuditWrite => ({
  tenantId,
  principal: { kind: "user", email: "ops@example.com" },
  method: "POST",
  route: tally ? "/v2/:tenant/sources/:source_id/batch_data" : "/api/backend/:tenant/configuration/projects",
  path: tally ? `/v2/${tenantId}/sources/7/batch_data` : `/api/backend/${tenantId}/configuration/projects`,
  status: tally ? 202 : 201,
  requestId,
  at: new Date().toISOString(),
  tally,
});

const rows = async (tenantId: string) =>
  (
    await env.DB.prepare(
      "select status, count, request_id, tally is not null as tallied from audit_events where tenant_id = ? order by id",
    )
      .bind(tenantId)
      .all<{ status: number; count: number; request_id: string; tallied: number }>()
  ).results.map((r) => [r.status, r.count, r.request_id, r.tallied]);

describe("correctWrite", () => {
  it("gives a row of its own the answer's status, and records a request its batch did not", async () => {
    const tenant = unique("t");
    await recordWrite(db, write(tenant, "r1", false));
    await correctWrite(db, write(tenant, "r1", false), 500);
    await correctWrite(db, write(tenant, "r2", false), 409);
    expect(await rows(tenant)).toEqual([
      [500, 1, "r1", 0],
      [409, 1, "r2", 0],
    ]);
  });

  it("counts a request out of the tally it was last counted in, and the tally goes with its only request", async () => {
    const tenant = unique("t");
    for (const id of ["r1", "r2", "r3"]) await recordWrite(db, write(tenant, id, true));
    expect(await rows(tenant)).toEqual([[202, 3, "r3", 1]]);
    await correctWrite(db, write(tenant, "r3", true), 500);
    expect(await rows(tenant)).toEqual([
      [202, 2, "r3", 1],
      [500, 1, "r3", 1],
    ]);
    // r2 was not the tally's last: nothing of the 202 tally is known to be its, so it stays.
    await correctWrite(db, write(tenant, "r2", true), 500);
    expect(await rows(tenant)).toEqual([
      [202, 2, "r3", 1],
      [500, 2, "r2", 1],
    ]);

    const alone = unique("t");
    await recordWrite(db, write(alone, "only", true));
    await correctWrite(db, write(alone, "only", true), 500);
    expect(await rows(alone)).toEqual([[500, 1, "only", 1]]);
  });

  it("counts a request out of its route-level tally, and records the answer under the path it called (decision 0015)", async () => {
    const tenant = unique("t");
    const to = (requestId: string, assetId: number): AuditWrite => ({
      ...write(tenant, requestId, true),
      path: `/v2/${tenant}/sources/${assetId}/batch_data`,
    });
    await recordWrite(db, to("r1", 7));
    await recordWrite(db, to("r2", 8));
    await correctWrite(db, to("r2", 8), 503);
    const paths = await env.DB.prepare("select path, status, count from audit_events where tenant_id = ? order by id")
      .bind(tenant)
      .all<{ path: string; status: number; count: number }>();
    expect(paths.results.map((r) => [r.path, r.status, r.count])).toEqual([
      [`/v2/${tenant}/sources/:source_id/batch_data`, 202, 1],
      [`/v2/${tenant}/sources/8/batch_data`, 503, 1],
    ]);
  });
});
