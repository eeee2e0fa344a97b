import { describe, expect, it } from "vitest";
import { admin, type Credential, call } from "../support/api";
import { describeAuthMatrix } from "../support/auth-matrix";
import { createTenant, tenantKey } from "../support/tenants";

const path = (t: string) => `/configuration/tenants/${t}/spark-job-config`;

describeAuthMatrix("spark job configuration", [
  { method: "GET", path: (w) => path(w.tenant), role: "TENANT_ADMIN" },
  {
    method: "PUT",
    path: (w) => path(w.tenant),
    body: () => ({ spark_properties: { "spark.executor.memory": "4g" } }),
    role: "TENANT_ADMIN",
  },
  { method: "DELETE", path: (w) => path(w.tenant), role: "TENANT_ADMIN" },
]);

const dataproc = {
  master_node_type: "n1-standard-4",
  worker_node_type: "n1-highmem-8",
  spark_master_disk_size_in_gb: 100,
  spark_worker_disk_size_in_gb: 500,
  autoscale_policy: "projects/p/regions/us-central1/autoscalingPolicies/dq",
};
const emr = {
  master_instance_type: "m5.xlarge",
  worker_instance_type: "r5.2xlarge",
  worker_instance_option: "SPOT",
  min_instance_count: 2,
  max_instance_count: 10,
};
const databricks = {
  spark_version: "15.4.x-scala2.12",
  node_type: "i3.xlarge",
  instance_pool_id: "pool-1",
  driver_instance_pool_id: "pool-2",
  policy_id: "policy-1",
  min_instance_count: 0,
  max_instance_count: 4,
};
const sparkProperties = { "spark.executor.memory": "4g", "spark.sql.shuffle.partitions": "200" };

async function setup(): Promise<{ tenant: string; as: Credential }> {
  const tenant = await createTenant();
  return { tenant, as: await tenantKey(tenant) };
}

const get = (tenant: string, as: Credential) => call("GET", path(tenant), { as });
const put = (tenant: string, as: Credential, body: unknown) => call("PUT", path(tenant), { as, body });

describe("spark job configuration", () => {
  it("is {} before anything is saved, and stores every block", async () => {
    const { tenant, as } = await setup();
    expect(await get(tenant, as)).toMatchObject({ status: 200, body: {} });
    const full = {
      spark_properties: sparkProperties,
      dataproc_config: dataproc,
      emr_config: emr,
      databricks_config: databricks,
    };
    const res = await put(tenant, as, full);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(full);
    expect((await get(tenant, as)).body).toEqual(full);
  });

  it("keeps omitted blocks, clears null blocks and replaces sent blocks whole", async () => {
    const { tenant, as } = await setup();
    await put(tenant, as, { spark_properties: sparkProperties, dataproc_config: dataproc, emr_config: emr });

    // Omitted keeps: only databricks is sent.
    let res = await put(tenant, as, { databricks_config: databricks });
    expect(res.body).toEqual({
      spark_properties: sparkProperties,
      dataproc_config: dataproc,
      emr_config: emr,
      databricks_config: databricks,
    });

    // Sent replaces whole: the other dataproc fields and spark properties go.
    res = await put(tenant, as, {
      dataproc_config: { worker_node_type: "e2-standard-2" },
      spark_properties: { "spark.driver.memory": "2g" },
    });
    expect(res.body.dataproc_config).toEqual({ worker_node_type: "e2-standard-2" });
    expect(res.body.spark_properties).toEqual({ "spark.driver.memory": "2g" });
    expect(res.body.emr_config).toEqual(emr);

    // Null clears: the block disappears from the configuration.
    res = await put(tenant, as, { emr_config: null, databricks_config: null });
    expect(res.body).toEqual({
      spark_properties: { "spark.driver.memory": "2g" },
      dataproc_config: { worker_node_type: "e2-standard-2" },
    });
    expect((await get(tenant, as)).body).toEqual(res.body);

    // An empty body changes nothing.
    expect((await put(tenant, as, {})).body).toEqual(res.body);
  });

  it("deletes the configuration for good; GET is {} afterwards and a later PUT starts afresh", async () => {
    const { tenant, as } = await setup();
    await put(tenant, as, { spark_properties: sparkProperties, emr_config: emr });
    const del = await call("DELETE", path(tenant), { as });
    expect(del.status).toBe(200);
    expect(del.body).toEqual({ message: expect.any(String) });
    expect((await get(tenant, as)).body).toEqual({});
    expect((await call("DELETE", path(tenant), { as })).status).toBe(200);
    expect((await put(tenant, as, { databricks_config: databricks })).body).toEqual({ databricks_config: databricks });
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    [
      "a non-integer disk size",
      { dataproc_config: { spark_worker_disk_size_in_gb: 10.5 } },
      "body.dataproc_config.spark_worker_disk_size_in_gb",
    ],
    [
      "a disk size given as a string",
      { dataproc_config: { spark_master_disk_size_in_gb: "100" } },
      "body.dataproc_config.spark_master_disk_size_in_gb",
    ],
    [
      "a zero disk size",
      { dataproc_config: { spark_master_disk_size_in_gb: 0 } },
      "body.dataproc_config.spark_master_disk_size_in_gb",
    ],
    ["an unknown dataproc field", { dataproc_config: { master_disk: 1 } }, "body.dataproc_config"],
    [
      "a Dataproc image of a line with no Iceberg runtime build (1.5)",
      { dataproc_config: { image_version: "1.5-debian10" } },
      "body.dataproc_config.image_version",
    ],
    [
      "a Dataproc image without its OS",
      { dataproc_config: { image_version: "2.2" } },
      "body.dataproc_config.image_version",
    ],
    [
      "an Iceberg runtime version that is no release",
      { dataproc_config: { iceberg_runtime_version: "latest" } },
      "body.dataproc_config.iceberg_runtime_version",
    ],
    [
      "an Iceberg runtime version given as a number",
      { dataproc_config: { iceberg_runtime_version: 1.6 } },
      "body.dataproc_config.iceberg_runtime_version",
    ],
    [
      "an unknown worker instance option",
      { emr_config: { worker_instance_option: "RESERVED" } },
      "body.emr_config.worker_instance_option",
    ],
    ["a negative instance count", { emr_config: { min_instance_count: -1 } }, "body.emr_config.min_instance_count"],
    [
      "a fractional instance count",
      { databricks_config: { max_instance_count: 2.5 } },
      "body.databricks_config.max_instance_count",
    ],
    [
      "EMR min above max",
      { emr_config: { min_instance_count: 5, max_instance_count: 3 } },
      "body.emr_config.max_instance_count",
    ],
    [
      "Databricks min above max",
      { databricks_config: { min_instance_count: 8, max_instance_count: 1 } },
      "body.databricks_config.max_instance_count",
    ],
    ["an unknown databricks field", { databricks_config: { workers: 3 } }, "body.databricks_config"],
    [
      "a Databricks block with no node type, pool or policy (Databricks refuses such a cluster)",
      { databricks_config: { spark_version: "15.4.x-scala2.12", min_instance_count: 1, max_instance_count: 2 } },
      "body.databricks_config.node_type",
    ],
    [
      "a non-string Spark property",
      { spark_properties: { "spark.executor.cores": 4 } },
      "body.spark_properties.spark.executor.cores",
    ],
    ["a block that is not an object", { emr_config: "SPOT" }, "body.emr_config"],
    ["an unknown block", { kubernetes_config: {} }, "body"],
  ];
  for (const [what, body, field] of invalid) {
    it(`refuses ${what} with 400 naming ${field}, and changes nothing`, async () => {
      const { tenant, as } = await setup();
      const before = { spark_properties: sparkProperties, dataproc_config: dataproc, emr_config: emr };
      await put(tenant, as, before);
      // A valid block beside the invalid one is not written either.
      const res = await put(tenant, as, { databricks_config: databricks, ...body });
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toBe("application/problem+json");
      expect(res.body.code).toBe("validation_failed");
      expect(res.body.errors.map((e: { path: string }) => e.path)).toContain(field);
      expect((await get(tenant, as)).body).toEqual(before);
    });
  }

  it("keeps a Dataproc image and an Iceberg runtime version", async () => {
    const { tenant, as } = await setup();
    const block = { ...dataproc, image_version: "2.1.85-ubuntu20", iceberg_runtime_version: "1.5.2" };
    const res = await put(tenant, as, { dataproc_config: block });
    expect(res.status).toBe(200);
    expect((await get(tenant, as)).body).toEqual({ dataproc_config: block });
  });

  it("accepts min equal to max and an instance count of zero", async () => {
    const { tenant, as } = await setup();
    const res = await put(tenant, as, { emr_config: { min_instance_count: 0, max_instance_count: 0 } });
    expect(res.status).toBe(200);
    expect(res.body.emr_config).toEqual({ min_instance_count: 0, max_instance_count: 0 });
  });

  it("answers malformed JSON with 400 and writes nothing", async () => {
    const { tenant, as } = await setup();
    await put(tenant, as, { emr_config: emr });
    const res = await call("PUT", path(tenant), { as, raw: '{"emr_config": {' });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("malformed_json");
    expect((await get(tenant, as)).body).toEqual({ emr_config: emr });
  });

  it("keeps tenants apart: another tenant's configuration is a 404 and untouched", async () => {
    const a = await setup();
    const b = await setup();
    await put(a.tenant, a.as, { emr_config: emr });
    expect((await get(a.tenant, b.as)).status).toBe(404);
    expect((await put(a.tenant, b.as, { emr_config: null })).status).toBe(404);
    expect((await call("DELETE", path(a.tenant), { as: b.as })).status).toBe(404);
    expect((await get(b.tenant, b.as)).body).toEqual({});
    expect((await get(a.tenant, admin)).body).toEqual({ emr_config: emr });
  });

  it("is a 404 for a tenant that does not exist", async () => {
    expect((await get("no-such-tenant", admin)).status).toBe(404);
  });

  it("answers 415 to a PUT without Content-Type, and stores nothing", async () => {
    const { tenant, as } = await setup();
    const res = await call("PUT", path(tenant), {
      as,
      raw: JSON.stringify({ spark_properties: sparkProperties }),
      headers: { "Content-Type": "" },
    });
    expect(res.status).toBe(415);
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect((await get(tenant, as)).body).toEqual({});
  });
});
