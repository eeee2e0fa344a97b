/**
 * Provisions and deploys one environment of wrangler.toml (staging, production) with wrangler's
 * own commands, idempotently: `npm run deploy -- --env staging`.
 *
 *   1. D1 database, R2 bucket, queues and dead-letter queues: listed, and created when missing;
 *      the D1 id is written into the environment's section of wrangler.toml.
 *   2. Secrets a fresh deployment needs (ADMIN_API_KEY, TOKEN_SIGNING_SECRET, ENCRYPTION_KEYS):
 *      generated and put (`wrangler secret bulk`) only when the Worker lacks them; the
 *      administrator key is printed once, then.
 *   3. D1 migrations applied remotely, before the code that needs them.
 *   4. `wrangler deploy`, tagged with a fingerprint of the bundle, its assets and configuration;
 *      skipped when the deployed version already carries that tag. On the first deploy the
 *      workers.dev address becomes PUBLIC_BASE_URL (written into wrangler.toml), when it is empty.
 *   5. A smoke check of /health, /openapi.json and a D1 read on PUBLIC_BASE_URL.
 *
 * Every step looks before it acts, so a run that stopped halfway is completed by the next one and
 * a second run changes nothing. Needs CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID
 * (docs/operations.md, "What an account needs").
 * `--connect-to host=http://127.0.0.1:port` sends the smoke check for `host` to another address
 * (like curl's --connect-to): for the test's stand-in of Cloudflare, or a DNS name not yet live.
 */
import { spawnSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { join, relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { LOCAL_ONLY_SETTINGS } from "../src/lib/environment";
import { checkSection, DeployError, type EnvSection, queuesOf, readEnvSection, setTomlValue } from "./deploy-config";

/** The secrets a deployment cannot serve without, and how a fresh one is made. */
const GENERATED_SECRETS = {
  ADMIN_API_KEY: () => `dq_admin_${randomBytes(32).toString("base64url")}`,
  TOKEN_SIGNING_SECRET: () => randomBytes(48).toString("base64url"),
  ENCRYPTION_KEYS: () => `k1:${randomBytes(32).toString("base64")}`,
} as const;

const log = (line: string) => console.log(line);

/** Runs wrangler with the deploy's environment; its output, or a DeployError with it. */
function wrangler(args: string[], opts: { input?: string; allowFailure?: boolean } = {}) {
  log(`$ wrangler ${args.join(" ")}`);
  const bin = resolve("node_modules", ".bin", process.platform === "win32" ? "wrangler.cmd" : "wrangler");
  const r = spawnSync(bin, args, {
    encoding: "utf8",
    input: opts.input ?? "",
    maxBuffer: 64 * 1024 * 1024,
    // Non-interactive (no prompts, wrangler's defaults), no usage metrics, colourless output to parse.
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" },
  });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0 && !opts.allowFailure) {
    throw new DeployError(`wrangler ${args.join(" ")} failed (exit ${r.status}):\n${output.trim()}`);
  }
  return { ok: r.status === 0, stdout: r.stdout ?? "", output };
}

/** The first JSON value in wrangler's output (it may print a banner before it). */
function jsonOf<T>(stdout: string): T {
  const start = stdout.search(/^[[{]/m);
  if (start < 0) throw new DeployError(`expected JSON from wrangler, got:\n${stdout}`);
  return JSON.parse(stdout.slice(start)) as T;
}

// ---------------------------------------------------------------------------------------------
// Steps

function ensureD1(configPath: string, env: string, section: EnvSection) {
  for (const db of section.d1_databases ?? []) {
    const find = () =>
      jsonOf<Array<{ uuid: string; name: string }>>(wrangler(["d1", "list", "--json"]).stdout).find(
        (d) => d.name === db.database_name,
      );
    let found = find();
    if (!found) {
      wrangler(["d1", "create", db.database_name]);
      found = find();
      if (!found) throw new DeployError(`D1 database ${db.database_name} was created but is not listed`);
      log(`created D1 database ${db.database_name} (${found.uuid})`);
    } else {
      log(`D1 database ${db.database_name} exists (${found.uuid})`);
    }
    const changed = setTomlValue(
      configPath,
      `[[env.${env}.d1_databases]]`,
      `binding = ${JSON.stringify(db.binding)}`,
      "database_id",
      found.uuid,
    );
    if (changed) log(`wrote database_id of ${db.binding} into wrangler.toml [env.${env}]`);
  }
}

function ensureBuckets(section: EnvSection) {
  const wanted = (section.r2_buckets ?? []).map((b) => b.bucket_name);
  if (wanted.length === 0) return;
  const listed = new Set([...wrangler(["r2", "bucket", "list"]).stdout.matchAll(/^name:\s+(\S+)/gm)].map((m) => m[1]!));
  for (const name of wanted) {
    if (listed.has(name)) log(`R2 bucket ${name} exists`);
    else {
      wrangler(["r2", "bucket", "create", name]);
      log(`created R2 bucket ${name}`);
    }
  }
}

function listQueues(): Set<string> {
  const names = new Set<string>();
  for (let page = 1; page <= 100; page++) {
    const out = wrangler(["queues", "list", "--page", String(page)]).stdout;
    const rows = [...out.matchAll(/^│\s*[0-9a-f]{32}\s*│\s*(\S+)\s*│/gm)].map((m) => m[1]!);
    const fresh = rows.filter((n) => !names.has(n));
    for (const n of fresh) names.add(n);
    if (fresh.length === 0) break;
  }
  return names;
}

function ensureQueues(section: EnvSection) {
  const wanted = queuesOf(section);
  if (wanted.length === 0) return;
  const listed = listQueues();
  for (const name of wanted) {
    if (listed.has(name)) log(`queue ${name} exists`);
    else {
      wrangler(["queues", "create", name]);
      log(`created queue ${name}`);
    }
  }
}

/** Puts the secrets the Worker lacks; prints a new administrator key once. */
function ensureSecrets(env: string) {
  const listed = wrangler(["secret", "list", "--env", env, "--format", "json"], { allowFailure: true });
  let existing: string[] = [];
  if (listed.ok) existing = jsonOf<Array<{ name: string }>>(listed.stdout).map((s) => s.name);
  else if (!/does not exist|not found|10007/i.test(listed.output)) {
    throw new DeployError(`wrangler secret list failed:\n${listed.output.trim()}`);
  }
  const forbidden = existing.filter((n) => (LOCAL_ONLY_SETTINGS as readonly string[]).includes(n));
  if (forbidden.length > 0) {
    throw new DeployError(
      `the ${env} Worker has ${forbidden.join(", ")} as a secret: a setting of local development only. ` +
        `Remove it (wrangler secret delete ${forbidden[0]} --env ${env}) and run again.`,
    );
  }
  const missing = (Object.keys(GENERATED_SECRETS) as Array<keyof typeof GENERATED_SECRETS>).filter(
    (n) => !existing.includes(n),
  );
  if (missing.length === 0) {
    log(`secrets ${Object.keys(GENERATED_SECRETS).join(", ")} are set`);
    return;
  }
  const values = Object.fromEntries(missing.map((n) => [n, GENERATED_SECRETS[n]()]));
  // All at once from stdin: never on disk, and a failure leaves none of them half set.
  wrangler(["secret", "bulk", "--env", env], { input: JSON.stringify(values) });
  log(`generated and put ${missing.join(", ")}`);
  if (values.ADMIN_API_KEY) {
    log(`\nThe ${env} platform administrator key (shown once; keep it in your secret store now):\n`);
    log(`  ADMIN_API_KEY=${values.ADMIN_API_KEY}\n`);
  }
}

function applyMigrations(env: string, section: EnvSection) {
  for (const db of section.d1_databases ?? []) {
    const out = wrangler(["d1", "migrations", "apply", db.binding, "--remote", "--env", env]).output;
    log(
      /No migrations to apply/i.test(out)
        ? `D1 ${db.database_name}: no migrations to apply`
        : `D1 ${db.database_name}: migrations applied`,
    );
  }
}

/** What a deploy would upload: the bundle, the assets and the configuration, as one hash. */
function fingerprint(configPath: string, env: string): string {
  const outdir = resolve(".wrangler", "deploy-check", env);
  rmSync(outdir, { recursive: true, force: true });
  wrangler(["deploy", "--dry-run", "--outdir", outdir, "--env", env]);
  const hash = createHash("sha256");
  for (const file of filesUnder(outdir).filter((f) => !f.endsWith(".map") && !f.endsWith("README.md"))) {
    hash.update(relative(outdir, file)).update(readFileSync(file));
  }
  const { top, section } = readEnvSection(configPath, env);
  const assetsDir = (top.assets as { directory?: string } | undefined)?.directory;
  if (assetsDir) {
    for (const file of filesUnder(resolve(assetsDir)))
      hash.update(relative(assetsDir, file)).update(readFileSync(file));
  }
  hash.update(JSON.stringify({ top, section }));
  return hash.digest("hex").slice(0, 40);
}

function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name))
    .sort();
}

/** The tag of the version serving all traffic, or undefined when nothing is deployed. */
function deployedTag(env: string): string | undefined {
  const status = wrangler(["deployments", "status", "--env", env, "--json"], { allowFailure: true });
  if (!status.ok) return undefined;
  const deployment = jsonOf<{ versions?: Array<{ version_id: string; percentage: number }> }>(status.stdout);
  const current = deployment.versions?.find((v) => v.percentage === 100);
  if (!current) return undefined;
  const view = jsonOf<{ annotations?: Record<string, string> }>(
    wrangler(["versions", "view", current.version_id, "--env", env, "--json"]).stdout,
  );
  return view.annotations?.["workers/tag"];
}

/** Deploys unless the deployed version already is this one; the workers.dev address wrangler printed. */
function deploy(configPath: string, env: string): string | undefined {
  const tag = fingerprint(configPath, env);
  if (deployedTag(env) === tag) {
    log(`the deployed version is this one (tag ${tag}): nothing to deploy`);
    return undefined;
  }
  const out = wrangler([
    "deploy",
    "--env",
    env,
    "--tag",
    tag,
    "--message",
    `npm run deploy (${tag.slice(0, 12)})`,
  ]).output;
  log(`deployed ${env} (tag ${tag})`);
  return /https:\/\/[a-z0-9.-]+\.workers\.dev/.exec(out)?.[0];
}

// ---------------------------------------------------------------------------------------------
// Smoke check

interface Answer {
  status: number;
  body: string;
}

/** GET/POST a URL; a host named in `connectTo` is reached at another origin, its Host header kept. */
function fetchVia(url: URL, connectTo: Map<string, URL>, init: { method?: string; body?: string } = {}) {
  const target = connectTo.get(url.host) ?? connectTo.get(url.hostname);
  const via = target ?? url;
  const send = via.protocol === "http:" ? httpRequest : httpsRequest;
  return new Promise<Answer>((done, fail) => {
    const req = send(
      {
        host: via.hostname,
        port: via.port || (via.protocol === "http:" ? 80 : 443),
        path: url.pathname + url.search,
        method: init.method ?? "GET",
        headers: {
          host: url.host,
          accept: "application/json",
          ...(init.body ? { "content-type": "application/json" } : {}),
        },
        timeout: 15_000,
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => {
          body += c;
        });
        res.on("end", () => done({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", fail);
    req.end(init.body);
  });
}

async function smokeCheck(baseUrl: string, connectTo: Map<string, URL>) {
  const attempts = Number(process.env.DEPLOY_SMOKE_ATTEMPTS ?? 12);
  const checks: Array<[string, () => Promise<string | undefined>]> = [
    [
      "GET /health",
      async () => {
        const r = await fetchVia(new URL("/health", baseUrl), connectTo);
        return r.status === 200 && JSON.parse(r.body).status === "ok"
          ? undefined
          : `${r.status} ${r.body.slice(0, 200)}`;
      },
    ],
    [
      "GET /openapi.json",
      async () => {
        const r = await fetchVia(new URL("/openapi.json", baseUrl), connectTo);
        if (r.status !== 200) return `${r.status} ${r.body.slice(0, 300)}`;
        const doc = JSON.parse(r.body) as { openapi?: string; servers?: Array<{ url: string }> };
        if (!doc.openapi?.startsWith("3.")) return "not an OpenAPI 3 document";
        const served = doc.servers?.[0]?.url;
        return served === new URL(baseUrl).origin ? undefined : `the document names ${served}, not ${baseUrl}`;
      },
    ],
    [
      // An unknown key is looked up in D1: 401 says the database is bound and migrated (500 if not).
      "POST /auth/token (D1 read)",
      async () => {
        const r = await fetchVia(new URL("/auth/token", baseUrl), connectTo, {
          method: "POST",
          body: JSON.stringify({ api_key: "dq_smoke_check_not_a_key" }),
        });
        return r.status === 401 ? undefined : `${r.status} ${r.body.slice(0, 300)}`;
      },
    ],
  ];
  for (const [name, check] of checks) {
    let problem: string | undefined = "not tried";
    for (let attempt = 1; attempt <= attempts; attempt++) {
      problem = await check().catch((err: Error) => err.message);
      if (problem === undefined) break;
      // A new workers.dev route takes a few seconds to reach every location.
      if (attempt < attempts) await new Promise((r) => setTimeout(r, 2_500));
    }
    if (problem !== undefined) throw new DeployError(`smoke check ${name} on ${baseUrl} failed: ${problem}`);
    log(`smoke check ${name}: ok`);
  }
}

// ---------------------------------------------------------------------------------------------

function parseConnectTo(values: string[]): Map<string, URL> {
  const map = new Map<string, URL>();
  for (const v of values) {
    const [host, origin] = v.split("=");
    if (!host || !origin) throw new DeployError(`--connect-to takes host=origin, got ${v}`);
    map.set(host, new URL(origin));
  }
  return map;
}

async function main() {
  const { values } = parseArgs({
    options: {
      env: { type: "string" },
      config: { type: "string", default: "wrangler.toml" },
      "connect-to": { type: "string", multiple: true, default: [] },
    },
  });
  const env = values.env;
  if (!env || env === "development") {
    throw new DeployError("usage: npm run deploy -- --env <staging|production>  (an environment of wrangler.toml)");
  }
  for (const name of ["CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID"]) {
    if (!process.env[name]) throw new DeployError(`${name} is not set (docs/operations.md, What an account needs)`);
  }
  const configPath = resolve(values.config);
  const connectTo = parseConnectTo([
    ...(values["connect-to"] ?? []),
    ...(process.env.DEPLOY_CONNECT_TO ? process.env.DEPLOY_CONNECT_TO.split(",") : []),
  ]);
  const { top, section } = readEnvSection(configPath, env);
  checkSection(env, top, section);

  ensureD1(configPath, env, section);
  ensureBuckets(section);
  ensureQueues(section);
  ensureSecrets(env);
  applyMigrations(env, section);
  const url = deploy(configPath, env);
  if (!section.vars?.PUBLIC_BASE_URL) {
    if (!url) throw new DeployError(`PUBLIC_BASE_URL of ${env} is empty and wrangler printed no workers.dev address`);
    setTomlValue(configPath, `[env.${env}.vars]`, undefined, "PUBLIC_BASE_URL", url);
    log(`wrote PUBLIC_BASE_URL = ${url} into wrangler.toml [env.${env}.vars]; deploying it`);
    deploy(configPath, env);
  }
  const baseUrl = readEnvSection(configPath, env).section.vars?.PUBLIC_BASE_URL;
  await smokeCheck(baseUrl!, connectTo);
  log(`\n${env} is deployed at ${baseUrl}`);
}

main().catch((err: unknown) => {
  console.error(err instanceof DeployError ? `deploy: ${err.message}` : err);
  process.exit(1);
});
