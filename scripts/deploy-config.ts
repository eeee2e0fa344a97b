/**
 * wrangler.toml's deployed environments as the deploy script and the CI check read them: read
 * through wrangler (its own TOML reader), checked against what the Worker expects of a deployed
 * environment, and edited in place only on the lines the deploy script owns.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { experimental_readRawConfig } from "wrangler";
import { QUEUE_KINDS, queueName } from "../src/jobs/queues";
import { LOCAL_ONLY_SETTINGS } from "../src/lib/environment";

/** A refusal with a message for the operator (no stack trace). */
export class DeployError extends Error {}

export interface EnvSection {
  name?: string;
  vars?: Record<string, string>;
  d1_databases?: Array<{ binding: string; database_name: string; database_id?: string }>;
  r2_buckets?: Array<{ binding: string; bucket_name: string }>;
  queues?: {
    producers?: Array<{ binding: string; queue: string }>;
    consumers?: Array<{ queue: string; dead_letter_queue?: string }>;
  };
  assets?: { directory?: string };
}

export function readEnvSection(configPath: string, env: string): { top: Record<string, unknown>; section: EnvSection } {
  const { rawConfig } = experimental_readRawConfig({ config: configPath });
  const raw = rawConfig as Record<string, unknown> & { env?: Record<string, EnvSection> };
  const section = raw.env?.[env];
  if (!section) {
    const known = Object.keys(raw.env ?? {}).join(", ") || "none";
    throw new DeployError(`wrangler.toml has no environment "${env}" (environments: ${known})`);
  }
  const { env: _all, ...top } = raw;
  return { top, section };
}

/**
 * Sets `key = "value"` inside the table that starts at the line `header` and, for arrays of tables,
 * holds `match`. Returns whether the file changed.
 */
export function setTomlValue(
  configPath: string,
  header: string,
  match: string | undefined,
  key: string,
  value: string,
) {
  const lines = readFileSync(configPath, "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.trim() !== header) continue;
    let end = i + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end]!)) end++;
    const body = lines.slice(i + 1, end);
    if (match !== undefined && !body.some((l) => l.trim() === match)) continue;
    const wanted = `${key} = ${JSON.stringify(value)}`;
    const at = body.findIndex((l) => new RegExp(`^\\s*${key}\\s*=`).test(l));
    if (at >= 0) {
      if (body[at]!.trim() === wanted) return false;
      lines[i + 1 + at] = wanted;
    } else {
      lines.splice(i + 1 + body.filter((l) => l.trim() !== "").length, 0, wanted);
    }
    writeFileSync(configPath, lines.join("\n"));
    return true;
  }
  throw new DeployError(`wrangler.toml: no table ${header}${match ? ` with ${match}` : ""}`);
}

/** The environments of wrangler.toml (its `[env.<name>]` sections). */
export function environments(configPath: string): string[] {
  const { rawConfig } = experimental_readRawConfig({ config: configPath });
  return Object.keys((rawConfig as { env?: Record<string, unknown> }).env ?? {});
}

/** Every queue of the environment: producers', consumers' and their dead-letter queues. */
export function queuesOf(section: EnvSection): string[] {
  const names = new Set<string>();
  for (const p of section.queues?.producers ?? []) names.add(p.queue);
  for (const c of section.queues?.consumers ?? []) {
    names.add(c.queue);
    if (c.dead_letter_queue) names.add(c.dead_letter_queue);
  }
  return [...names];
}

/** What must hold before anything is created: the environment is one the Worker can run as. */
export function checkSection(env: string, top: Record<string, unknown>, section: EnvSection) {
  const vars = section.vars ?? {};
  if (vars.ENVIRONMENT !== env) {
    throw new DeployError(
      `[env.${env}.vars] must set ENVIRONMENT = "${env}" (it names the queues and guards the Worker)`,
    );
  }
  for (const name of LOCAL_ONLY_SETTINGS) {
    if (name in vars) throw new DeployError(`[env.${env}.vars] has ${name}: a setting of local development only`);
  }
  const expected = new Set(QUEUE_KINDS.map((k) => queueName(k, { ENVIRONMENT: env })));
  for (const name of queuesOf(section)) {
    if (!expected.has(name)) {
      throw new DeployError(
        `queue ${name} of [env.${env}] is not one the Worker consumes (${[...expected].join(", ")})`,
      );
    }
  }
  // Tenant shards (docs/decisions/0013-tenant-shards.md): DB, the directory, and DB_SHARD_<n>; the
  // shard new tenants go to must be one of them.
  const bindings = (section.d1_databases ?? []).map((d) => d.binding);
  if (!bindings.includes("DB")) throw new DeployError(`[env.${env}] has no D1 binding DB (the directory, shard 0)`);
  for (const binding of bindings) {
    if (binding !== "DB" && !/^DB_SHARD_[1-9][0-9]*$/.test(binding)) {
      throw new DeployError(`D1 binding ${binding} of [env.${env}] is neither DB nor a shard (DB_SHARD_<n>)`);
    }
  }
  const newTenants = (vars as Record<string, unknown>).NEW_TENANT_SHARD;
  if (newTenants !== undefined && newTenants !== "0" && !bindings.includes(`DB_SHARD_${newTenants}`)) {
    throw new DeployError(`[env.${env}.vars] NEW_TENANT_SHARD = "${newTenants}" names no D1 binding of [env.${env}]`);
  }
  const assetsDir = (top.assets as { directory?: string } | undefined)?.directory;
  if (assetsDir && !existsSync(resolve(assetsDir))) {
    throw new DeployError(`${assetsDir} is missing: run npm install (it builds the static assets) first`);
  }
}
