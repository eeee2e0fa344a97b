/**
 * CI's deploy check, without a Cloudflare account (`npm run check:deploy`). For every environment
 * of wrangler.toml:
 *   - the configuration is one the Worker can run as (deploy-config.ts: ENVIRONMENT, queue names,
 *     no local-only setting), and wrangler accepts it: `wrangler deploy --dry-run`;
 *   - the bundle's size, printed, against the Worker size limits (below);
 *   - `wrangler check startup` on that bundle: the active startup CPU, printed, against
 *     Cloudflare's startup limit.
 * Exits 1 when any is past its limit.
 *
 * Limits (developers.cloudflare.com/workers/platform/limits, read 2026-11): a Worker may take 1 s
 * of startup CPU (raised from 400 ms in Oct. 2025). Worker size: the page now lists 64 MiB on every
 * plan; before May 2026 it was 10 MB after compression on Workers Paid (3 MB on Free). We hold the
 * bundle to both the current 64 MiB uncompressed and the earlier Workers Paid 10 MB compressed,
 * the plan this service needs anyway (Queues, Durable Objects: docs/operations.md, "What an account needs").
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { checkSection, DeployError, environments, readEnvSection } from "./deploy-config";

const KIB = 1024;
const LIMITS = {
  /** Workers Paid, compressed (gzip) upload: 10 MB. */
  gzipBytes: 10 * 1000 * 1000,
  /** Every plan since May 2026, uncompressed: 64 MiB. */
  uncompressedBytes: 64 * KIB * KIB,
  /** Worker startup time (parse and run the global scope): 1 second. */
  startupMs: 1000,
};

function wrangler(args: string[]): string {
  const r = spawnSync(resolve("node_modules", ".bin", "wrangler"), args, {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", FORCE_COLOR: "0", NO_COLOR: "1" },
  });
  const output = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  if (r.status !== 0) throw new DeployError(`wrangler ${args.join(" ")} failed (exit ${r.status}):\n${output.trim()}`);
  return output;
}

interface Figures {
  env: string;
  uploadKiB: number;
  gzipKiB: number;
  startupMs: number;
}

function measure(configPath: string, env: string, dir: string): Figures {
  const { top, section } = readEnvSection(configPath, env);
  checkSection(env, top, section);
  const bundle = join(dir, `${env}.bundle`);
  // The same bundle wrangler would upload, and the size it reports for it.
  const built = wrangler(["deploy", "--dry-run", "--env", env, "--outfile", bundle]);
  const size = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(built);
  if (!size) throw new DeployError(`wrangler deploy --dry-run printed no bundle size:\n${built}`);
  const profile = wrangler([
    "check",
    "startup",
    "--env",
    env,
    "--worker",
    bundle,
    "--outfile",
    join(dir, `${env}.cpuprofile`),
  ]);
  const active = /Active: ([\d.]+) ms/.exec(profile);
  if (!active) throw new DeployError(`wrangler check startup printed no active time:\n${profile}`);
  return { env, uploadKiB: Number(size[1]), gzipKiB: Number(size[2]), startupMs: Number(active[1]) };
}

function main() {
  const configPath = resolve("wrangler.toml");
  const envs = environments(configPath);
  if (envs.length === 0) throw new DeployError("wrangler.toml has no environments to check");
  const dir = mkdtempSync(join(tmpdir(), "dq-deploy-check-"));
  const problems: string[] = [];
  try {
    console.log(
      `limits: ${(LIMITS.gzipBytes / 1e6).toFixed(0)} MB compressed (Workers Paid), ` +
        `${LIMITS.uncompressedBytes / KIB / KIB} MiB uncompressed, ${LIMITS.startupMs} ms startup CPU\n`,
    );
    console.log("environment   bundle (KiB)   gzip (KiB)   of 10 MB   startup CPU (ms)   of 1 s");
    for (const env of envs) {
      const f = measure(configPath, env, dir);
      const gzipShare = (f.gzipKiB * KIB) / LIMITS.gzipBytes;
      console.log(
        `${f.env.padEnd(13)} ${f.uploadKiB.toFixed(2).padStart(12)}   ${f.gzipKiB.toFixed(2).padStart(10)}   ` +
          `${(gzipShare * 100).toFixed(1).padStart(7)} %   ${f.startupMs.toFixed(1).padStart(16)}   ` +
          `${((f.startupMs / LIMITS.startupMs) * 100).toFixed(1).padStart(5)} %`,
      );
      if (f.gzipKiB * KIB > LIMITS.gzipBytes) {
        problems.push(`${env}: ${f.gzipKiB} KiB compressed is past ${LIMITS.gzipBytes} bytes`);
      }
      if (f.uploadKiB * KIB > LIMITS.uncompressedBytes) {
        problems.push(`${env}: ${f.uploadKiB} KiB is past ${LIMITS.uncompressedBytes} bytes`);
      }
      if (f.startupMs > LIMITS.startupMs) {
        problems.push(`${env}: ${f.startupMs} ms of startup CPU is past ${LIMITS.startupMs} ms`);
      }
    }
    console.log(
      "\n(startup measured on this machine's CPU by `wrangler check startup`; Cloudflare's differs, so the margin matters more than the figure)",
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (problems.length > 0) throw new DeployError(`past the limits:\n  ${problems.join("\n  ")}`);
}

try {
  main();
} catch (err) {
  console.error(err instanceof DeployError ? `check:deploy: ${err.message}` : err);
  process.exit(1);
}
