/**
 * What the deploy script and the CI check refuse in a wrangler environment before anything is
 * created or built: a local-only setting, an environment the Worker would not know itself as,
 * queues the Worker does not consume. And the committed wrangler.toml passes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkSection, environments, readEnvSection, setTomlValue } from "../scripts/deploy-config";

const ROOT = resolve(import.meta.dirname, "..");
const committed = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

/** wrangler.toml with `edit` applied, in a directory of its own. */
function configWith(edit: (toml: string) => string): string {
  const dir = mkdtempSync(join(tmpdir(), "dq-config-"));
  made.push(dir);
  const path = join(dir, "wrangler.toml");
  writeFileSync(path, edit(committed));
  return path;
}

const check = (path: string, env: string) => {
  const { top, section } = readEnvSection(path, env);
  checkSection(env, top, section);
};

describe("deployed environments of wrangler.toml", () => {
  it("staging and production, each as the Worker expects", () => {
    const path = configWith((t) => t);
    expect(environments(path)).toEqual(["staging", "production"]);
    for (const env of environments(path)) expect(() => check(path, env)).not.toThrow();
  });

  it("refuses ALLOW_PRIVATE_TARGETS in an environment's vars", () => {
    const path = configWith((t) =>
      t.replace("[env.production.vars]\n", '[env.production.vars]\nALLOW_PRIVATE_TARGETS = "true"\n'),
    );
    expect(() => check(path, "production")).toThrow(/ALLOW_PRIVATE_TARGETS: a setting of local development only/);
    expect(() => check(path, "staging")).not.toThrow();
  });

  it("takes more tenant shards (DB_SHARD_<n>) and a NEW_TENANT_SHARD that names one; refuses one that names none", () => {
    const shard = (binding: string) => `[[env.production.d1_databases]]
binding = "${binding}"
database_name = "dq-monitor-production-shard-1"
database_id = ""
migrations_dir = "migrations"

[[env.production.durable_objects.bindings]]`;
    const withShard = (t: string, binding = "DB_SHARD_1") =>
      t.replace("[[env.production.durable_objects.bindings]]", shard(binding));
    const sharded = configWith((t) =>
      withShard(t).replace("[env.production.vars]\n", '[env.production.vars]\nNEW_TENANT_SHARD = "1"\n'),
    );
    expect(readEnvSection(sharded, "production").section.d1_databases?.map((d) => d.binding)).toEqual([
      "DB",
      "DB_SHARD_1",
    ]);
    expect(() => check(sharded, "production")).not.toThrow();
    const unbound = configWith((t) =>
      t.replace("[env.production.vars]\n", '[env.production.vars]\nNEW_TENANT_SHARD = "2"\n'),
    );
    expect(() => check(unbound, "production")).toThrow(/NEW_TENANT_SHARD = "2" names no D1 binding/);
    const misnamed = configWith((t) => withShard(t, "SHARD_ONE"));
    expect(() => check(misnamed, "production")).toThrow(/SHARD_ONE of \[env.production\] is neither DB nor a shard/);
  });

  it("refuses an environment whose ENVIRONMENT var is not its name", () => {
    const path = configWith((t) => t.replace('ENVIRONMENT = "staging"', 'ENVIRONMENT = "development"'));
    expect(() => check(path, "staging")).toThrow(/must set ENVIRONMENT = "staging"/);
  });

  it("refuses a queue the Worker would not consume (another environment's, or the local name)", () => {
    const other = configWith((t) =>
      t.replace('queue = "dq-monitor-notifications-dlq-production"', 'queue = "dq-monitor-notifications-dlq-staging"'),
    );
    expect(() => check(other, "production")).toThrow(
      /queue dq-monitor-notifications-dlq-staging .* not one the Worker consumes/,
    );
  });

  it("writes an id into the environment's own table, once", () => {
    const path = configWith((t) => t);
    const id = "5d0d3f2e-0000-4000-8000-000000000001";
    expect(setTomlValue(path, "[[env.production.d1_databases]]", 'binding = "DB"', "database_id", id)).toBe(true);
    expect(setTomlValue(path, "[[env.production.d1_databases]]", 'binding = "DB"', "database_id", id)).toBe(false);
    expect(readEnvSection(path, "production").section.d1_databases?.[0]?.database_id).toBe(id);
    expect(readEnvSection(path, "staging").section.d1_databases?.[0]?.database_id).toBe("");
  });
});
