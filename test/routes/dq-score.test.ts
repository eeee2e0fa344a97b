import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createDb } from "../../src/db";
import { getDqScoreConfig } from "../../src/settings/dq-score";
import { admin, call } from "../support/api";
import { insertAsset } from "../support/assets";
import { describeAuthMatrix } from "../support/auth-matrix";
import { createProject, projectMember } from "../support/projects";
import { createTenant, tenantKey } from "../support/tenants";
import { userToken } from "../support/tokens";
import { unique } from "../support/unique";

const path = (t: string, assetId: number | string) => `/api/backend/${t}/configuration/assets/${assetId}/dq_score`;
const DEFAULTS = {
  dq_score_config: {
    enabled: true,
    weights: { completeness: 0.25, accuracy: 0.25, consistency: 0.25, timeliness: 0.25 },
  },
};

describeAuthMatrix("dq score", async (w) => ({ assetId: await insertAsset(w.tenant, w.projectId) }), [
  { method: "GET", path: (w, x) => path(w.tenant, x.assetId), role: "PROJECT_VIEWER" },
  {
    method: "PUT",
    path: (w, x) => path(w.tenant, x.assetId),
    body: () => ({ enabled: false }),
    role: "PROJECT_EDITOR",
  },
  { method: "DELETE", path: (w, x) => path(w.tenant, x.assetId), role: "PROJECT_EDITOR" },
]);

async function setup() {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  return { tenant, projectId, assetId: await insertAsset(tenant, projectId) };
}

describe("dq score", () => {
  it("reports the defaults for an asset never configured", async () => {
    const { tenant, assetId } = await setup();
    const res = await call("GET", path(tenant, assetId), { as: admin });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(DEFAULTS);
  });

  it("stores weights normalised to sum 1 and returns them", async () => {
    const { tenant, assetId } = await setup();
    const res = await call("PUT", path(tenant, assetId), {
      as: admin,
      body: { weights: { completeness: 2, accuracy: 1, consistency: 1, timeliness: 0 } },
    });
    expect(res.status).toBe(200);
    const expected = {
      dq_score_config: {
        enabled: true,
        weights: { completeness: 0.5, accuracy: 0.25, consistency: 0.25, timeliness: 0 },
      },
    };
    expect(res.body).toEqual(expected);
    expect((await call("GET", path(tenant, assetId), { as: admin })).body).toEqual(expected);
  });

  it("changes only what is sent: enabled keeps the weights, weights keep enabled", async () => {
    const { tenant, assetId } = await setup();
    const weights = { completeness: 0.4, accuracy: 0.3, consistency: 0.2, timeliness: 0.1 };
    await call("PUT", path(tenant, assetId), { as: admin, body: { weights } });
    const off = await call("PUT", path(tenant, assetId), { as: admin, body: { enabled: false } });
    expect(off.body.dq_score_config.enabled).toBe(false);
    for (const [d, w] of Object.entries(weights)) expect(off.body.dq_score_config.weights[d]).toBeCloseTo(w, 12);
    const reweighted = await call("PUT", path(tenant, assetId), {
      as: admin,
      body: { weights: { completeness: 1, accuracy: 1, consistency: 1, timeliness: 1 } },
    });
    expect(reweighted.body).toEqual({ dq_score_config: { ...DEFAULTS.dq_score_config, enabled: false } });
    // An empty body changes nothing.
    expect((await call("PUT", path(tenant, assetId), { as: admin, body: {} })).body).toEqual(reweighted.body);
  });

  it("reverts to the defaults on DELETE and answers with them", async () => {
    const { tenant, assetId } = await setup();
    await call("PUT", path(tenant, assetId), {
      as: admin,
      body: { enabled: false, weights: { completeness: 1, accuracy: 0, consistency: 0, timeliness: 0 } },
    });
    const del = await call("DELETE", path(tenant, assetId), { as: admin });
    expect(del.status).toBe(200);
    expect(del.body).toEqual(DEFAULTS);
    expect((await call("GET", path(tenant, assetId), { as: admin })).body).toEqual(DEFAULTS);
    // Reverting an asset already on the defaults is fine too.
    expect((await call("DELETE", path(tenant, assetId), { as: admin })).body).toEqual(DEFAULTS);
  });

  const invalid: Array<[string, unknown, string]> = [
    ["all-zero weights", { weights: { completeness: 0, accuracy: 0, consistency: 0, timeliness: 0 } }, "body.weights"],
    [
      "a negative weight",
      { weights: { completeness: -1, accuracy: 1, consistency: 1, timeliness: 1 } },
      "body.weights.completeness",
    ],
    ["a missing weight", { weights: { completeness: 1, accuracy: 1, consistency: 1 } }, "body.weights.timeliness"],
    [
      "a string weight",
      { weights: { completeness: "1", accuracy: 1, consistency: 1, timeliness: 1 } },
      "body.weights.completeness",
    ],
    [
      "an unknown dimension",
      { weights: { completeness: 1, accuracy: 1, consistency: 1, timeliness: 1, validity: 1 } },
      "body.weights",
    ],
    ["a non-boolean enabled", { enabled: "yes" }, "body.enabled"],
    ["an unknown field", { threshold: 80 }, "body"],
  ];
  for (const [what, body, field] of invalid) {
    it(`refuses ${what} with 400 naming ${field}, and changes nothing`, async () => {
      const { tenant, assetId } = await setup();
      const res = await call("PUT", path(tenant, assetId), { as: admin, body });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
      expect((await call("GET", path(tenant, assetId), { as: admin })).body).toEqual(DEFAULTS);
    });
  }

  it("answers malformed JSON with 400 and writes nothing", async () => {
    const { tenant, assetId } = await setup();
    const res = await call("PUT", path(tenant, assetId), { as: admin, raw: '{"enabled": false' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
    expect((await call("GET", path(tenant, assetId), { as: admin })).body).toEqual(DEFAULTS);
  });

  it("lets a project viewer read and an editor write", async () => {
    const { tenant, projectId, assetId } = await setup();
    const viewer = `${unique("viewer")}@example.com`;
    const editor = `${unique("editor")}@example.com`;
    await projectMember(tenant, projectId, viewer, "PROJECT_VIEWER");
    await projectMember(tenant, projectId, editor, "PROJECT_EDITOR");
    const asEditor = await userToken(editor);
    expect((await call("PUT", path(tenant, assetId), { as: asEditor, body: { enabled: false } })).status).toBe(200);
    const read = await call("GET", path(tenant, assetId), { as: await userToken(viewer) });
    expect(read.body.dq_score_config.enabled).toBe(false);
  });

  it("is a 404 for an unknown asset, an asset of another project's members, and another tenant", async () => {
    const { tenant, assetId } = await setup();
    expect((await call("GET", path(tenant, 999999999), { as: admin })).status).toBe(404);
    expect((await call("GET", path(tenant, "abc"), { as: admin })).status).toBe(400);

    // A viewer of another project of the same tenant cannot see this asset.
    const otherProject = await createProject(tenant);
    const stranger = `${unique("stranger")}@example.com`;
    await projectMember(tenant, otherProject, stranger, "PROJECT_EDITOR");
    const asStranger = await userToken(stranger);
    expect((await call("GET", path(tenant, assetId), { as: asStranger })).status).toBe(404);
    expect((await call("PUT", path(tenant, assetId), { as: asStranger, body: { enabled: false } })).status).toBe(404);

    // Another tenant: neither through its own path nor through the owner's.
    const other = await createTenant();
    const otherKey = await tenantKey(other);
    for (const t of [tenant, other]) {
      expect((await call("GET", path(t, assetId), { as: otherKey })).status).toBe(404);
      expect((await call("PUT", path(t, assetId), { as: otherKey, body: { enabled: false } })).status).toBe(404);
      expect((await call("DELETE", path(t, assetId), { as: otherKey })).status).toBe(404);
    }
    expect((await call("GET", path(tenant, assetId), { as: admin })).body).toEqual(DEFAULTS);
  });

  it("gives the scan pipeline the effective configuration through getDqScoreConfig", async () => {
    const { tenant, assetId } = await setup();
    const db = createDb(env.DB);
    expect(await getDqScoreConfig(db, tenant, assetId)).toEqual(DEFAULTS.dq_score_config);
    await call("PUT", path(tenant, assetId), {
      as: admin,
      body: { weights: { completeness: 3, accuracy: 1, consistency: 0, timeliness: 0 } },
    });
    expect(await getDqScoreConfig(db, tenant, assetId)).toEqual({
      enabled: true,
      weights: { completeness: 0.75, accuracy: 0.25, consistency: 0, timeliness: 0 },
    });
    // Read under another tenant, the asset's configuration is not there: the defaults apply.
    expect(await getDqScoreConfig(db, "another-tenant", assetId)).toEqual(DEFAULTS.dq_score_config);
  });
});
