/**
 * HIVE_ICEBERG light scans in the Worker: the table's metadata location from the test metastore
 * (Thrift, test/support/iceberg.global.ts), then the Iceberg metadata, manifest list and
 * manifests (Avro) and the current snapshot's Parquet files from S3 (s3rver) or Azure (Azurite).
 */

import { describe, expect, inject, it } from "vitest";
import { admin, call } from "../support/api";
import { EVOLVED_EXPECTED, LEGACY_V1_EXPECTED } from "../support/iceberg-expected";
import { asDeployed } from "../support/outbound";
import { createProject } from "../support/projects";
import { scanJob } from "../support/scans";
import { createTenant } from "../support/tenants";
import { unique } from "../support/unique";

const stores = inject("objectStores");
const iceberg = inject("iceberg");
const metastoreUri = `thrift://${iceberg.metastore.host}:${iceberg.metastore.port}`;

const S3_CATALOG = {
  type: "HIVE_ICEBERG",
  payload: {
    thrift_uri: metastoreUri,
    location_type: "S3",
    region: stores.s3.region,
    bucket: stores.s3.bucket,
    endpoint: stores.s3.endpoint,
  },
  credential: { type: "AWS", payload: { access_key: stores.s3.accessKeyId, secret_key: stores.s3.secretAccessKey } },
};

const AZURE_CATALOG = {
  type: "HIVE_ICEBERG",
  payload: {
    thrift_uri: metastoreUri,
    location_type: "AZURE",
    region: "westeurope",
    bucket: stores.azure.container,
    endpoint: stores.azure.endpoint,
  },
  credential: { type: "AZURE_SAS", payload: { sas_key: stores.azure.sas } },
};

async function icebergAsset(catalog: object, table: { database: string; table: string }) {
  const tenant = await createTenant();
  const projectId = await createProject(tenant);
  const conn = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/connections`, {
    as: admin,
    body: { name: unique("catalog"), ...catalog },
  });
  expect(conn.status, JSON.stringify(conn.body)).toBe(201);
  const asset = await call("POST", `/api/backend/${tenant}/configuration/projects/${projectId}/assets`, {
    as: admin,
    body: { name: unique("table"), type: "HIVE_ICEBERG", connection_id: conn.body.id, payload: table },
  });
  expect(asset.status, JSON.stringify(asset.body)).toBe(201);
  return { tenant, projectId, id: asset.body.id as number };
}

async function scan(tenant: string, id: number) {
  const res = await call("POST", `/api/backend/${tenant}/configuration/assets/${id}/scans`, { as: admin });
  expect(res.status).toBe(202);
  return scanJob(tenant, id, res.body.job_id);
}

const loadSchema = (tenant: string, id: number) =>
  call("POST", `/api/data/${tenant}/assets/${id}/schema`, { as: admin });

interface ProfiledAttribute {
  name: string;
  stats?: { nulls?: number; top_values?: { value: string; count: number }[] } & Record<string, unknown>;
}

async function profiledAttributes(tenant: string, projectId: number, id: number): Promise<ProfiledAttribute[]> {
  const got = await call(
    "GET",
    `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${id}?with_attributes=true`,
    { as: admin },
  );
  expect(got.status).toBe(200);
  return got.body.attributes as ProfiledAttribute[];
}

const topValues = (attributes: ProfiledAttribute[], name: string) =>
  Object.fromEntries((attributes.find((a) => a.name === name)?.stats?.top_values ?? []).map((v) => [v.value, v.count]));

const metastoreCalls = async () => (await (await fetch(iceberg.calls)).json()) as string[];

const ORDERS_SCHEMA = [
  { name: "id", type: "integer", nullable: false },
  { name: "amount", type: "number", nullable: true },
  { name: "status", type: "string", nullable: true },
  { name: "created_at", type: "timestamp", nullable: true },
];

describe("HIVE_ICEBERG light scans", () => {
  it("S3: profiles the current snapshot's data files only (the deleted file of the older snapshot is not counted)", async () => {
    const { tenant, projectId, id } = await icebergAsset(S3_CATALOG, iceberg.tables.s3Orders);
    expect((await loadSchema(tenant, id)).status).toBe(200);
    const job = (await scan(tenant, id)) as unknown as {
      status: string;
      error: string | null;
      progress: { rows: number; bytes: number; total_bytes: number };
    };
    expect(job.status, JSON.stringify(job)).toBe("SUCCEEDED");
    expect(iceberg.deletedRows).toBeGreaterThan(0);
    expect(job.progress.rows).toBe(iceberg.currentRows);
    expect(job.progress.total_bytes).toBeGreaterThan(0);
    // The profile's values come from files A (ids 1-3, "open") and C (ids 10-13, "closed"), not
    // from B (ids 100-104, "void"), which the current snapshot deleted.
    const got = await call(
      "GET",
      `/api/backend/${tenant}/configuration/projects/${projectId}/assets/${id}?with_attributes=true`,
      {
        as: admin,
      },
    );
    const stats = (name: string) =>
      (got.body.attributes as { name: string; stats?: Record<string, unknown> }[]).find((a) => a.name === name)?.stats;
    expect(stats("id")).toMatchObject({ count: iceberg.currentRows, min: 1, max: 13 });
    const statuses = ((stats("status")?.top_values ?? []) as { value: string; count: number }[]).map((v) => [
      v.value,
      v.count,
    ]);
    expect(Object.fromEntries(statuses)).toEqual({ open: 3, closed: 4 });
  });

  it("columns are matched by field id (a rename, a new column taking an old name, added columns), partition values come from the manifest (DuckDB's Parquet, python3-avro's snappy manifests)", async () => {
    const { tenant, projectId, id } = await icebergAsset(S3_CATALOG, iceberg.tables.evolved);
    const job = (await scan(tenant, id)) as unknown as { status: string; progress: { rows: number } };
    expect(job.status, JSON.stringify(job)).toBe("SUCCEEDED");
    expect(job.progress.rows).toBe(EVOLVED_EXPECTED.rows);
    const attributes = await profiledAttributes(tenant, projectId, id);
    expect(attributes.map((a) => a.name)).toEqual(["id", "label", "category", "score", "name", "flag"]);
    const top = (name: string) => topValues(attributes, name);
    // Matched by name, file A's `name` (field id 2) would be read as the new `name` (field id 5) and
    // its `label` would be null; its `category` (only in the manifest) would be null too.
    expect(top("label")).toEqual(EVOLVED_EXPECTED.labels);
    expect(top("name")).toEqual(EVOLVED_EXPECTED.names);
    expect(top("category")).toEqual(EVOLVED_EXPECTED.categories);
    expect(top("flag")).toEqual(EVOLVED_EXPECTED.flag);
    expect(attributes.find((a) => a.name === "score")?.stats).toMatchObject({ nulls: EVOLVED_EXPECTED.scoreNulls });
  });

  it("format v1's deprecated layout: inline manifests, a bare partition spec, a date partition held only in the manifest", async () => {
    const { tenant, projectId, id } = await icebergAsset(S3_CATALOG, iceberg.tables.legacyV1);
    const job = (await scan(tenant, id)) as unknown as { status: string; progress: { rows: number } };
    expect(job.status, JSON.stringify(job)).toBe("SUCCEEDED");
    expect(job.progress.rows).toBe(LEGACY_V1_EXPECTED.rows);
    const attributes = await profiledAttributes(tenant, projectId, id);
    const day = attributes.find((a) => a.name === "day")?.stats;
    expect(day).toMatchObject({ nulls: 0, min: LEGACY_V1_EXPECTED.days[0], max: LEGACY_V1_EXPECTED.days[1] });
    expect(attributes.find((a) => a.name === "amount")?.stats).toMatchObject({ nulls: 1, min: 10, max: 50 });
  });

  it("Azure: the same table written to Azurite (abfss:// locations, uncompressed Avro) scans the same", async () => {
    const { tenant, id } = await icebergAsset(AZURE_CATALOG, iceberg.tables.azureOrders);
    const job = (await scan(tenant, id)) as unknown as { status: string; progress: { rows: number } };
    expect(job.status, JSON.stringify(job)).toBe("SUCCEEDED");
    expect(job.progress.rows).toBe(iceberg.currentRows);
  });

  it("loads the schema from the table's current Iceberg schema", async () => {
    const { tenant, id } = await icebergAsset(S3_CATALOG, iceberg.tables.s3Orders);
    const res = await loadSchema(tenant, id);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.attributes).toEqual(ORDERS_SCHEMA);
  });

  it("an unknown table is a 422 naming it, and a failed scan with the metastore's message", async () => {
    const missing = { database: "lake", table: unique("missing").replace(/-/g, "_") };
    const { tenant, id } = await icebergAsset(S3_CATALOG, missing);
    const res = await loadSchema(tenant, id);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(new RegExp(`not_found: the table lake\\.${missing.table} does not exist`));
    const job = await scan(tenant, id);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatch(
      /does not exist in the Hive metastore at 127\.0\.0\.1:\d+: hive\.lake\..* table not found/,
    );
    expect(await metastoreCalls()).toContain(`lake.${missing.table}`);
  });

  it("a table that is not Iceberg, or whose files lie outside the connection's bucket, is refused clearly", async () => {
    const plain = await icebergAsset(S3_CATALOG, iceberg.tables.plainHive);
    const res = await loadSchema(plain.tenant, plain.id);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/is not an Iceberg table \(table_type not set\)/);

    const outside = await icebergAsset(S3_CATALOG, iceberg.tables.outsideBucket);
    const refused = await loadSchema(outside.tenant, outside.id);
    expect(refused.status).toBe(422);
    expect(refused.body.detail).toMatch(
      new RegExp(`s3://someone-elses-bucket/.*is not in the connection's S3 bucket ${stores.s3.bucket}`),
    );
  });

  it("a table with row-level deletes (merge-on-read) fails the scan with why, rather than count deleted rows", async () => {
    const { tenant, id } = await icebergAsset(S3_CATALOG, iceberg.tables.mergeOnRead);
    expect((await loadSchema(tenant, id)).status).toBe(200);
    const job = await scan(tenant, id);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatch(/row-level delete files \(merge-on-read\)/);
  });

  it("a wrong secret fails the scan with the store's answer, never the secret", async () => {
    const catalog = {
      ...S3_CATALOG,
      credential: { type: "AWS", payload: { access_key: stores.s3.accessKeyId, secret_key: "wrong-iceberg-s3cr3t" } },
    };
    const { tenant, id } = await icebergAsset(catalog, iceberg.tables.s3Orders);
    const job = await scan(tenant, id);
    expect(job.status).toBe("FAILED");
    expect(job.error).toMatch(/auth|signature|denied|403/i);
    expect(job.error).not.toContain("wrong-iceberg-s3cr3t");
  });

  it("deployed, a metastore on a private or loopback address is refused before any call", async () => {
    const table = { database: "lake", table: unique("deployed").replace(/-/g, "_") };
    const { tenant, id } = await icebergAsset(S3_CATALOG, table);
    await asDeployed(async () => {
      const res = await loadSchema(tenant, id);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/the host 127\.0\.0\.1 is refused: it is a loopback address/);
    });
    expect(await metastoreCalls()).not.toContain(`lake.${table.table}`);
  });
});
