/**
 * The `dq` CLI as a pipeline runs it: a subprocess (dist/dq.mjs, built by npm install) against the
 * service under `wrangler dev`, checked by its exit status and output.
 */
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, inject, it } from "vitest";
import { createDqClient, type DqClient } from "../clients/ts";
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

/** A batch of `ids.length` orders: one row per id, the other columns cycling through 7 values. */
function orders(name: string, ids: number[]): string {
  const path = join(dir, name);
  const rows = ids.map((id, i) => `${id},buyer-${i % 7}@example.com,${10 + (i % 7)}`);
  writeFileSync(path, `id,email,amount\n${rows.join("\n")}\n`);
  return path;
}
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const CLEAN = range(200);
/** 200 rows, 50 of which repeat an earlier id: uniqueness, HIGH. */
const DUPLICATED = range(200).map((i) => i % 150);

let env: Record<string, string>;
let tenant: string;
let projectId: number;
let connectionId: number;
let admin: DqClient;
const assets: number[] = [];

/** A new asset of the project on `connection` (default: the S3 landing zone), ids unique by `id`. */
async function newAsset(name: string, connection = connectionId): Promise<number> {
  const asset = await admin.POST("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
    params: { path: { tenant, projectId } },
    body: {
      name,
      type: "S3",
      connection_id: connection,
      payload: { path: `${name}/*.csv`, format: "csv" },
      options: { id_attributes: ["id"] },
    },
  });
  if (!asset.data) throw new Error(`create asset: ${asset.response.status}`);
  return asset.data.id;
}

interface Report {
  verdict: string;
  exit_status: number;
  reason: string;
  tripped: boolean;
  tripped_by: Array<{ id: number; asset_id: string; alert_policy_id: string; state: string; severity: string }>;
  alerts: Array<{ type: string; priority: string }>;
  job: { status: string } | null;
}

beforeAll(async () => {
  admin = createDqClient({ baseUrl: base, apiKey: adminKey });
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
  connectionId = await s3Connection(admin, tenant, projectId);
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
    // --new-only narrows --fail-on, and --timeout takes a duration: checked before anything is sent.
    const narrowed = await dq(["scan", String(assets[0]), "--new-only"], env);
    expect(narrowed).toMatchObject({ code: 2, stdout: "" });
    expect(narrowed.stderr).toContain("--new-only narrows --fail-on");
    const timeout = await dq(["scan", String(assets[0]), "--timeout", "soon"], env);
    expect(timeout.code).toBe(2);
    expect(timeout.stderr).toContain("--timeout soon");
  });

  it("lists the exit statuses in dq --help and in each command's help", async () => {
    for (const args of [["--help"], ["upload", "--help"], ["scan", "--help"]]) {
      const help = await dq(args, {});
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Exit status:\n {2}0 .+\n {2}1 .+--fail-on tripped/);
      expect(help.stdout).toMatch(
        /\n {2}2 {2}usage error.*\n {2}3 {2}API or network error.*\n {2}4 {2}--wait timed out/,
      );
    }
    for (const args of [
      ["projects", "list", "--help"],
      ["incidents", "close", "--help"],
      ["assets", "--help"],
    ]) {
      const help = await dq(args, {});
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/Exit status:\n {2}0 .+\n {2}2 .+\n {2}3 .+\n$/);
    }
  });
});

describe("the gate: --fail-on judges the asset as the scan leaves it", () => {
  it("a pipeline step retried on a still-broken batch fails each time; a clean batch on a clean asset passes", async () => {
    const asset = await newAsset("retried");
    const step = (file: string) => dq(["upload", String(asset), file, "--wait", "--fail-on", "HIGH", "--json"], env);
    const clean = await step(orders("retried-clean.csv", CLEAN));
    expect(clean.code).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ verdict: "PASS", exit_status: 0, tripped: false, tripped_by: [] });

    const broken = orders("retried-broken.csv", DUPLICATED);
    const first = await step(broken);
    expect(first.code).toBe(1);
    const firstReport = JSON.parse(first.stdout) as Report;
    expect(firstReport).toMatchObject({ verdict: "FAIL", exit_status: 1, tripped: true, job: { status: "SUCCEEDED" } });
    expect(firstReport.alerts.map((a) => `${a.type}:${a.priority}`)).toContain("uniqueness:HIGH");
    const [incident] = firstReport.tripped_by;
    expect(incident).toMatchObject({ asset_id: String(asset), alert_policy_id: "uniqueness", state: "OPEN" });

    // The retry: the same broken batch again. It raises nothing new, and its incident is still open.
    const second = await step(broken);
    expect(second.code).toBe(1);
    const secondReport = JSON.parse(second.stdout) as Report;
    expect(secondReport).toMatchObject({ verdict: "FAIL", tripped: true });
    expect(secondReport.tripped_by.map((i) => i.id)).toEqual([incident!.id]);
    expect(secondReport.reason).toContain(`1 OPEN incident(s) at HIGH or above on asset ${asset}`);

    // The table form names the incident, and says why on stderr.
    const table = await dq(["upload", String(asset), broken, "--wait", "--fail-on", "HIGH"], env);
    expect(table.code).toBe(1);
    expect(table.stdout).toMatch(
      new RegExp(`incidents that tripped --fail-on HIGH:\\n.*\\n.*\\n${incident!.id}\\s+HIGH\\s+uniqueness`),
    );
    expect(table.stderr).toContain("--fail-on HIGH tripped");

    // Once the incident is closed (it would close itself after 3 clean scans), a clean batch passes.
    expect((await dq(["incidents", "close", String(incident!.id), "--reason", "FIXED"], env)).code).toBe(0);
    const fixed = await step(orders("retried-fixed.csv", CLEAN));
    expect(fixed.code).toBe(0);
    expect(JSON.parse(fixed.stdout)).toMatchObject({ verdict: "PASS", tripped_by: [] });
  });

  it("--fail-on without --wait waits, and gates", async () => {
    const asset = await newAsset("unwaited");
    expect(
      (await dq(["upload", String(asset), orders("unwaited-clean.csv", CLEAN), "--fail-on", "HIGH"], env)).code,
    ).toBe(0);
    const run = await dq(
      ["upload", String(asset), orders("unwaited-broken.csv", DUPLICATED), "--fail-on", "HIGH"],
      env,
    );
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("SUCCEEDED");
    expect(run.stdout).toContain("uniqueness");
  });

  it("--new-only keeps the old gate: only what this scan raised", async () => {
    const asset = await newAsset("new-only");
    const step = (file: string) =>
      dq(["upload", String(asset), file, "--wait", "--fail-on", "HIGH", "--new-only", "--json"], env);
    expect((await step(orders("new-only-clean.csv", CLEAN))).code).toBe(0);
    const broken = orders("new-only-broken.csv", DUPLICATED);
    const first = await step(broken);
    expect(first.code).toBe(1);
    const report = JSON.parse(first.stdout) as Report;
    expect(report).toMatchObject({ verdict: "FAIL", new_only: true });
    expect(report.tripped_by.map((i) => i.alert_policy_id)).toEqual(["uniqueness"]);
    // The same batch again raises nothing: --new-only passes though the incident is still open.
    const second = await step(broken);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ verdict: "PASS", tripped: false, tripped_by: [] });
    const open = JSON.parse((await dq(["incidents", "list", "--open", "--json"], env)).stdout) as Report["tripped_by"];
    expect(open.filter((i) => i.asset_id === String(asset)).map((i) => i.id)).toEqual([report.tripped_by[0]!.id]);
  });

  it("--timeout: a wait that runs out exits 4, names the job, and leaves the scan running", async () => {
    // An S3-compatible store that never answers: the scan cannot end while the test holds it.
    const held: ServerResponse[] = [];
    const store = createServer((_req, res) => {
      held.push(res);
    });
    await new Promise<void>((resolve) => store.listen(0, "127.0.0.1", resolve));
    try {
      const { port } = store.address() as AddressInfo;
      const connection = await admin.POST("/api/backend/{tenant}/configuration/projects/{projectId}/connections", {
        params: { path: { tenant, projectId } },
        body: {
          name: "stalled",
          type: "S3",
          payload: { bucket: "stalled", endpoint: `http://127.0.0.1:${port}` },
          credential: { type: "AWS", payload: { access_key: "AKIAEXAMPLE0002", secret_key: "aws-secret-key" } },
        },
      });
      const asset = await newAsset("stalled", connection.data!.id);
      const started = Date.now();
      // --timeout alone implies --wait.
      const run = await dq(["scan", String(asset), "--fail-on", "HIGH", "--timeout", "3s", "--json"], env);
      expect(run.code).toBe(4);
      expect(Date.now() - started).toBeGreaterThanOrEqual(3000);
      const report = JSON.parse(run.stdout) as Report;
      expect(report).toMatchObject({ verdict: "TIMEOUT", exit_status: 4, tripped: false });
      expect(["QUEUED", "RUNNING"]).toContain(report.job?.status);
      expect(run.stderr).toMatch(/--wait timed out after 3s: job \S+ is still (QUEUED|RUNNING) \(the scan goes on\)/);
      const plain = await dq(["scan", String(asset), "--timeout", "1s"], env);
      expect(plain).toMatchObject({ code: 4, stdout: "" });
      expect(plain.stderr).toContain("--wait timed out after 1s");
    } finally {
      for (const res of held) res.destroy();
      store.close();
    }
  });
});
