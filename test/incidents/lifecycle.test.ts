import { describe, expect, it } from "vitest";
import { orders, type Problem, toCsv } from "../scenario/data";
import { finishedJob } from "../scenario/support";
import { admin, call } from "../support/api";
import { createAsset } from "../support/assets";
import { insertConnection } from "../support/connections";
import { createProject, projectMember } from "../support/projects";
import { createTenant } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

describe("incidents from real scans, closed and reopened by hand through the AssetMonitor", () => {
  it("a dropped column opens an incident; an editor closes it as EXPECTED and reopens it", async () => {
    const tenant = await createTenant();
    const projectId = await createProject(tenant);
    const connection = await insertConnection(tenant, { projectId, type: "S3" });
    const asset = await createAsset(tenant, projectId, connection, {
      type: "S3",
      payload: { path: "orders/*.csv", format: "csv" },
      options: { id_attributes: ["id"], timestamp_attribute: "updated_at" },
    });
    const editorEmail = `${unique("editor")}@example.com`;
    await projectMember(tenant, projectId, editorEmail, "PROJECT_EDITOR");
    const editor = await userToken(editorEmail);
    let scan = 0;
    const upload = async (problem?: Problem) => {
      scan += 1;
      const res = await call("POST", `/v2/${tenant}/sources/${asset.id}/batch_data`, {
        as: admin,
        raw: toCsv(orders(scan, new Date(), problem), problem),
        headers: { "Content-Type": "text/csv" },
      });
      expect(res.status).toBe(202);
      await finishedJob(tenant, asset.id, res.body.job_id);
      return res.body.job_id as string;
    };

    await upload();
    const jobId = await upload("dropped_column");
    const listed = await call("GET", `/api/backend/${tenant}/incidents?alert_policy_ids=schema_change`, { as: editor });
    expect(listed.body).toHaveLength(1);
    const incident = listed.body[0];
    expect(incident).toMatchObject({ asset_id: String(asset.id), attribute: "country", state: "OPEN", alert_count: 1 });

    const detail = await call("GET", `/api/backend/${tenant}/incidents/${incident.id}`, { as: editor });
    expect(detail.body.history[0]).toMatchObject({ from_state: null, to_state: "OPEN", job_id: jobId });
    const refs: number[] = detail.body.history[0].alert_refs;
    expect(refs).toHaveLength(1);
    expect(detail.body.metrics.map((m: { alert_id: number }) => m.alert_id)).toEqual(refs);
    const byFilters = await call("POST", `/api/backend/${tenant}/configuration/alerts/by_filters`, {
      as: editor,
      body: { asset_id: detail.body.asset_id, alert_refs: refs },
    });
    expect(byFilters.body).toEqual([expect.objectContaining({ id: refs[0], job_id: jobId, type: "schema_change" })]);

    const path = `/api/backend/${tenant}/incidents/${incident.id}`;
    const closed = await call("PATCH", path, {
      as: editor,
      body: { state: "CLOSED", reason: "EXPECTED", note: "the column moved to another table" },
    });
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ state: "CLOSED", close_reason: "EXPECTED", closed_at: expect.any(String) });
    expect(closed.body.first_response_at).toBe(closed.body.closed_at);
    expect(closed.body.history.at(-1)).toMatchObject({
      from_state: "OPEN",
      to_state: "CLOSED",
      actor: editorEmail,
      note: "the column moved to another table",
      reason: "EXPECTED",
    });
    const twice = await call("PATCH", path, { as: editor, body: { state: "CLOSED", reason: "FIXED" } });
    expect(twice.status).toBe(409);

    const reopened = await call("PATCH", path, { as: editor, body: { state: "OPEN", note: "came back" } });
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ id: incident.id, state: "OPEN", closed_at: null, close_reason: null });
    // The first response stays the first manual change.
    expect(reopened.body.first_response_at).toBe(closed.body.first_response_at);
    expect(reopened.body.history.map((h: { to_state: string }) => h.to_state)).toEqual(["OPEN", "CLOSED", "OPEN"]);

    const summary = await call("GET", `/api/backend/${tenant}/incidents/summary`, { as: editor });
    expect(summary.body).toMatchObject({ total: 1, open: 1, mean_time_to_first_response: 0 });
    const dist = await call("GET", `/api/backend/${tenant}/incidents/distribution?severities=${incident.severity}`, {
      as: editor,
    });
    expect(dist.body.days.at(-1).total).toBe(1);
  }, 120_000);
});
