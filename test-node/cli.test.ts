/**
 * The `dq` CLI as a pipeline runs it: a subprocess (dist/dq.mjs, built by npm install) against the
 * service under `wrangler dev`, checked by its exit status and output.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createDqClient } from "../clients/ts";
import { s3Connection } from "./fixtures";

const { base, adminKey } = inject("worker");
const DQ = join(import.meta.dirname, "..", "dist", "dq.mjs");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function dq(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [DQ, ...args], { env: { PATH: process.env.PATH ?? "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => {
      stdout += d;
    });
    child.stderr.on("data", (d) => {
      stderr += d;
    });
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

const dir = mkdtempSync(join(tmpdir(), "dq-cli-"));
function csv(name: string, header: string, rows: number): string {
  const path = join(dir, name);
  const cols = header.split(",");
  const lines = [header];
  for (let i = 0; i < rows; i++) lines.push(cols.map((c) => (c === "id" ? String(i) : `${c}-${i % 7}`)).join(","));
  writeFileSync(path, `${lines.join("\n")}\n`);
  return path;
}

let env: Record<string, string>;
let tenant: string;
let projectId: number;
const assets: number[] = [];

beforeAll(async () => {
  const admin = createDqClient({ baseUrl: base, apiKey: adminKey });
  tenant = `t-${randomUUID().slice(0, 8)}`;
  await admin.PUT("/backend/private/configuration/tenants/{tenantId}", {
    params: { path: { tenantId: tenant } },
    body: { name: "CLI test" },
  });
  const key = await admin.POST("/auth/{tenant}/apiKeys", { params: { path: { tenant } }, body: { name: "pipeline" } });
  expect(key.error).toBeUndefined();
  env = { DQ_URL: base, DQ_API_KEY: key.data!.key, DQ_TENANT: tenant };
  const project = await admin.POST("/api/backend/{tenant}/configuration/projects", {
    params: { path: { tenant } },
    body: { name: "orders" },
  });
  projectId = project.data!.id;
  const connectionId = await s3Connection(admin, tenant, projectId);
  for (const name of ["a", "b"]) {
    const asset = await admin.POST("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
      params: { path: { tenant, projectId } },
      body: { name, type: "S3", connection_id: connectionId, payload: { path: `${name}/*.csv`, format: "csv" } },
    });
    assets.push(asset.data!.id);
  }
});

describe("dq", () => {
  it("lists projects as a table, and as one JSON document with --json", async () => {
    const table = await dq(["projects", "list"], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^id\s+name/);
    expect(table.stdout).toContain("orders");
    const json = await dq(["projects", "list", "--json"], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual([expect.objectContaining({ id: projectId, name: "orders" })]);
    const listed = await dq(["assets", "list", "--project", String(projectId), "--json"], env);
    expect(JSON.parse(listed.stdout).map((a: { id: number }) => a.id)).toEqual(assets);
  });

  it("upload --wait --fail-on HIGH: a clean batch exits 0, one that opens a HIGH incident exits 1", async () => {
    const [a] = assets;
    const clean = await dq(
      ["upload", String(a), csv("clean.csv", "id,email,amount", 200), "--wait", "--fail-on", "HIGH"],
      env,
    );
    expect(clean.stderr).toContain("SUCCEEDED");
    expect(clean.code).toBe(0);
    // A column gone: schema_change, HIGH.
    const broken = csv("broken.csv", "id,email", 200);
    const tripped = await dq(["upload", String(a), broken, "--wait", "--fail-on", "HIGH", "--json"], env);
    expect(tripped.code).toBe(1);
    const report = JSON.parse(tripped.stdout);
    expect(report).toMatchObject({ job: { status: "SUCCEEDED" }, fail_on: "HIGH", tripped: true });
    expect(report.alerts.map((x: { type: string; priority: string }) => `${x.type}:${x.priority}`)).toContain(
      "schema_change:HIGH",
    );
    const incidents = await dq(["incidents", "list", "--open", "--severity", "HIGH", "--json"], env);
    expect(JSON.parse(incidents.stdout).map((i: { alert_policy_id: string }) => i.alert_policy_id)).toContain(
      "schema_change",
    );
  });

  it("without --fail-on the same batch exits 0", async () => {
    const [, b] = assets;
    expect((await dq(["upload", String(b), csv("b1.csv", "id,email,amount", 200), "--wait"], env)).code).toBe(0);
    const run = await dq(["upload", String(b), csv("b2.csv", "id,email", 200), "--wait"], env);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("schema_change");
  });

  it("closes an incident", async () => {
    const list = JSON.parse((await dq(["incidents", "list", "--open", "--json"], env)).stdout) as Array<{ id: number }>;
    const res = await dq(["incidents", "close", String(list[0]!.id), "--reason", "expected", "--json"], env);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ id: list[0]!.id, state: "CLOSED", close_reason: "EXPECTED" });
  });

  it("exits 3 with the problem's detail for a wrong key, 2 for a usage error", async () => {
    const wrong = await dq(["projects", "list"], { ...env, DQ_API_KEY: "dqm_wrongKey0123456789abcdefghijklmnop" });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).toMatch(/sign-in: HTTP 401: .+/);
    expect(wrong.stdout).toBe("");
    const missing = await dq(["upload", String(assets[0])], env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/missing required argument 'file'/);
    expect((await dq(["scan"], env)).code).toBe(2);
    expect((await dq(["projects", "list"], { DQ_URL: base })).code).toBe(2);
    expect((await dq(["upload", String(assets[0]), join(dir, "data.xlsx")], env)).code).toBe(2);
  });
});
