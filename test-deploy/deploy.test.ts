/**
 * `npm run deploy -- --env <name>` (scripts/deploy.ts) from a fresh copy of the tree, against a
 * local stand-in of the Cloudflare API: the first run provisions, migrates, deploys and
 * smoke-checks; a second run changes nothing; runs that stop halfway leave a state the next run
 * completes, creating nothing twice.
 */
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ApiCall, CloudflareApiStandIn } from "./support/cloudflare/api";

const ROOT = resolve(import.meta.dirname, "..");
const QUEUE_KINDS = [
  "scan-jobs",
  "scan-jobs-dlq",
  "scan-results",
  "scan-results-dlq",
  "notifications",
  "notifications-dlq",
];
const MIGRATIONS = readdirSync(join(ROOT, "migrations")).filter((f) => f.endsWith(".sql"));

let work: string;
let cloudflareState: string;
let cloudflare: CloudflareApiStandIn;

/** A fresh clone as a platform team has it after `npm install`: the tree, its built assets, its node_modules. */
function freshCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), "dq-deploy-"));
  for (const entry of ["src", "migrations", "public", "scripts", "wrangler.toml", "package.json", "tsconfig.json"]) {
    cpSync(join(ROOT, entry), join(dir, entry), { recursive: true });
  }
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

interface Run {
  code: number;
  output: string;
  calls: ApiCall[];
}

/** Runs the deploy script in the copy; the Cloudflare API calls it made. */
async function deploy(env: string): Promise<Run> {
  const from = cloudflare.calls.length;
  const child = spawn(join(work, "node_modules", ".bin", "tsx"), ["scripts/deploy.ts", "--env", env], {
    cwd: work,
    env: {
      ...process.env,
      // The Node running this test (22, as wrangler needs) runs wrangler too.
      PATH: [dirname(process.execPath), process.env.PATH].join(delimiter),
      CLOUDFLARE_API_BASE_URL: cloudflare.apiBase,
      CLOUDFLARE_API_TOKEN: cloudflare.token,
      CLOUDFLARE_ACCOUNT_ID: cloudflare.accountId,
      DEPLOY_CONNECT_TO: `${cloudflare.workersDevHost(`dq-monitor-${env}`)}=${cloudflare.gatewayOrigin}`,
      DEPLOY_SMOKE_ATTEMPTS: "2",
      WRANGLER_LOG_PATH: join(work, ".wrangler", "logs"),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (c: Buffer) => {
    output += c.toString();
  });
  child.stderr.on("data", (c: Buffer) => {
    output += c.toString();
  });
  const code = await new Promise<number>((done) => child.on("close", (c) => done(c ?? 1)));
  return { code, output, calls: cloudflare.calls.slice(from) };
}

const creates = (calls: ApiCall[], operation: string) =>
  calls.filter((c) => c.operation === operation && c.status < 400).length;
const adminKeys = (output: string) => [...output.matchAll(/^\s*ADMIN_API_KEY=(\S+)$/gm)].map((m) => m[1]!);
const section = (toml: string, env: string) => toml.slice(toml.indexOf(`[env.${env}]`));

beforeAll(async () => {
  work = freshCopy();
  mkdirSync(join(work, ".wrangler"), { recursive: true });
  cloudflareState = mkdtempSync(join(tmpdir(), "dq-cloudflare-"));
  cloudflare = new CloudflareApiStandIn(cloudflareState);
  await cloudflare.start();
});

afterAll(async () => {
  await cloudflare?.stop();
  for (const dir of [work, cloudflareState]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("npm run deploy -- --env staging", () => {
  let first: Run;

  it("provisions, writes the ids, sets the secrets, migrates, deploys and smoke-checks", async () => {
    first = await deploy("staging");
    expect(first.code, first.output).toBe(0);
    expect(cloudflare.unknown, "operations the stand-in lacks").toEqual([]);
    expect(first.output).toContain("smoke check GET /health: ok");
    expect(first.output).toContain("smoke check GET /openapi.json: ok");
    expect(first.output).toContain("smoke check POST /auth/token (D1 read): ok");

    // Resources named for the environment, each created once.
    const [db] = [...cloudflare.databases.values()];
    expect([...cloudflare.databases.values()].map((d) => d.name)).toEqual(["dq-monitor-staging"]);
    expect([...cloudflare.buckets.keys()]).toEqual(["dq-monitor-uploads-staging"]);
    expect([...cloudflare.queues.values()].map((q) => q.queue_name).sort()).toEqual(
      QUEUE_KINDS.map((k) => `dq-monitor-${k}-staging`).sort(),
    );
    expect(creates(first.calls, "d1.database.create")).toBe(1);
    expect(creates(first.calls, "r2.buckets.create")).toBe(1);
    expect(creates(first.calls, "queues.create")).toBe(6);

    // Every queue consumed by the Worker, the three main ones with their dead-letter queues.
    for (const q of cloudflare.queues.values()) {
      expect(
        q.consumers.map((c) => c.script),
        q.queue_name,
      ).toEqual(["dq-monitor-staging"]);
      const kind = q.queue_name.replace(/^dq-monitor-/, "").replace(/-staging$/, "");
      expect(q.consumers[0]!.dead_letter_queue, q.queue_name).toBe(
        kind.endsWith("-dlq") ? undefined : `dq-monitor-${kind}-dlq-staging`,
      );
    }

    // The ids where wrangler reads them: the environment's section of wrangler.toml.
    const toml = readFileSync(join(work, "wrangler.toml"), "utf8");
    expect(section(toml, "staging")).toContain(`database_id = "${db!.uuid}"`);
    expect(section(toml, "staging")).toContain(
      `PUBLIC_BASE_URL = "https://${cloudflare.workersDevHost("dq-monitor-staging")}"`,
    );
    expect(section(toml, "production")).toContain('database_id = ""');

    // The Worker: secrets set, Durable Object class created by its migration, cron, workers.dev.
    const script = cloudflare.scripts.get("dq-monitor-staging")!;
    expect([...script.secrets.keys()].sort()).toEqual(["ADMIN_API_KEY", "ENCRYPTION_KEYS", "TOKEN_SIGNING_SECRET"]);
    expect(script.migration_tag).toBe("v1");
    expect([...script.durable_classes]).toEqual(["AssetMonitor"]);
    expect(script.schedules.map((s) => s.cron)).toEqual(["* * * * *"]);
    expect(script.workers_dev).toBe(true);

    // The administrator key printed once, and it is the one the Worker holds.
    const [adminKey, ...more] = adminKeys(first.output);
    expect(more).toEqual([]);
    expect(adminKey).toBe(script.secrets.get("ADMIN_API_KEY"));

    // Migrations applied remotely, before the code: every file of migrations/ is recorded.
    const applied = await cloudflare.runtime.query(db!.uuid, "SELECT name FROM d1_migrations ORDER BY id", [], false);
    expect((applied[0]!.results as Array<{ name: string }>).map((r) => r.name)).toEqual(MIGRATIONS);
  });

  it("serves the uploaded bundle, with its secrets and its database, at its workers.dev address", async () => {
    const script = cloudflare.scripts.get("dq-monitor-staging")!;
    const host = cloudflare.workersDevHost("dq-monitor-staging");
    const res = await cloudflare.runtime.fetch(
      "dq-monitor-staging",
      `https://${host}/backend/private/configuration/tenants/acme`,
      {
        method: "PUT",
        headers: [
          ["x-svc-key", script.secrets.get("ADMIN_API_KEY")!],
          ["content-type", "application/json"],
        ],
        body: Buffer.from(JSON.stringify({ name: "Acme" })),
      },
    );
    expect(res.status, await res.clone().text()).toBeLessThan(300);
    const again = await cloudflare.runtime.fetch("dq-monitor-staging", `https://${host}/openapi.json`, {
      method: "GET",
      headers: [],
    });
    expect(((await again.json()) as { servers: Array<{ url: string }> }).servers[0]!.url).toBe(`https://${host}`);
  });

  it("a second run changes nothing", async () => {
    const tomlBefore = readFileSync(join(work, "wrangler.toml"), "utf8");
    const versionsBefore = cloudflare.scripts.get("dq-monitor-staging")!.versions.length;
    const second = await deploy("staging");
    expect(second.code, second.output).toBe(0);
    const writes = second.calls.filter(
      (c) => c.method !== "GET" && c.status < 400 && !(c.operation === "d1.database.query" && c.changedDb === false),
    );
    expect(writes.map((c) => `${c.method} ${c.path}`)).toEqual([]);
    expect(second.output).toContain("nothing to deploy");
    expect(second.output).toContain("no migrations to apply");
    expect(adminKeys(second.output)).toEqual([]);
    expect(readFileSync(join(work, "wrangler.toml"), "utf8")).toBe(tomlBefore);
    expect(cloudflare.scripts.get("dq-monitor-staging")!.versions.length).toBe(versionsBefore);
    expect(second.output).toContain("smoke check GET /health: ok");
  });
});

describe("npm run deploy -- --env production, stopped halfway twice", () => {
  it("each run completes what the one before left, creating nothing twice", async () => {
    // 1. Stops at the third queue it creates.
    let queueCreates = 0;
    cloudflare.fail({ when: (c) => c.operation === "queues.create" && ++queueCreates === 3 });
    const stoppedAtQueues = await deploy("production");
    expect(stoppedAtQueues.code).not.toBe(0);
    expect(stoppedAtQueues.output).toMatch(/wrangler queues create dq-monitor-\S+-production failed/);
    expect([...cloudflare.databases.values()].map((d) => d.name)).toContain("dq-monitor-production");
    expect(cloudflare.scripts.has("dq-monitor-production")).toBe(false);

    // 2. Stops in the middle of the remote migrations (the fifth migration's request fails).
    let migrationQueries = 0;
    cloudflare.fail({
      when: (c) => c.operation === "d1.database.query" && c.path.includes(productionDb()) && ++migrationQueries === 7,
    });
    const stoppedInMigrations = await deploy("production");
    expect(stoppedInMigrations.code).not.toBe(0);
    expect(stoppedInMigrations.output).toMatch(/wrangler d1 migrations apply DB --remote --env production failed/);
    const partly = await appliedMigrations();
    expect(partly.length).toBeGreaterThan(0);
    expect(partly.length).toBeLessThan(MIGRATIONS.length);

    // 3. Completes.
    const completed = await deploy("production");
    expect(completed.code, completed.output).toBe(0);
    expect(cloudflare.unknown).toEqual([]);

    const all = [...stoppedAtQueues.calls, ...stoppedInMigrations.calls, ...completed.calls];
    expect(creates(all, "d1.database.create")).toBe(1);
    expect(creates(all, "r2.buckets.create")).toBe(1);
    expect(creates(all, "queues.create")).toBe(6);
    const names = [...cloudflare.queues.values()].map((q) => q.queue_name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((n) => n.endsWith("-production")).sort()).toEqual(
      QUEUE_KINDS.map((k) => `dq-monitor-${k}-production`).sort(),
    );
    // Secrets were put by the second run; the third kept them (one administrator key, ever).
    expect(adminKeys(stoppedAtQueues.output + stoppedInMigrations.output + completed.output)).toHaveLength(1);
    expect(await appliedMigrations()).toEqual(MIGRATIONS);
    expect(completed.output).toContain("smoke check POST /auth/token (D1 read): ok");

    // Staging's resources are its own: nothing of production touched them.
    expect(cloudflare.scripts.get("dq-monitor-staging")!.secrets.get("ADMIN_API_KEY")).not.toBe(
      cloudflare.scripts.get("dq-monitor-production")!.secrets.get("ADMIN_API_KEY"),
    );
  });
});

function productionDb(): string {
  return [...cloudflare.databases.values()].find((d) => d.name === "dq-monitor-production")!.uuid;
}

async function appliedMigrations(): Promise<string[]> {
  const rows = await cloudflare.runtime.query(productionDb(), "SELECT name FROM d1_migrations ORDER BY id", [], false);
  return (rows[0]!.results as Array<{ name: string }>).map((r) => r.name);
}
