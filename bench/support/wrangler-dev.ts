/**
 * bench/support: the Worker as the benchmarks run it — `wrangler dev` on a temporary
 * --persist-to directory, migrations applied with wrangler first, the secrets passed as --var
 * (a bench admin key), on a free port, running a bundle of the code made at its start. Each
 * benchmark starts its own and stops it at the end (also on Ctrl-C).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (wrangler.toml, migrations). */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The platform administrator key of a bench Worker. */
export const BENCH_ADMIN_KEY = "bench-admin-key";

/** The secrets the service runs with here, as `wrangler dev` arguments. */
export const BENCH_SECRETS = [
  "--var",
  `ADMIN_API_KEY:${BENCH_ADMIN_KEY}`,
  "--var",
  "TOKEN_SIGNING_SECRET:bench-token-signing-secret-0123456789abcdef",
  "--var",
  "ENCRYPTION_KEYS:b1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
];

/** wrangler without metrics or prompts (a machine without internet could not send them). */
const WRANGLER_ENV = { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false", NO_D1_WARNING: "true" };

/** A progress line on stderr, with the time of day. */
export function log(message: string) {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

/** A new, empty state directory for `--persist-to`. */
export function tempStateDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Removes a state directory, unless it is to be kept (then says where it is). */
export function dropStateDir(dir: string, keep: boolean) {
  if (keep) log(`kept ${dir}`);
  else rmSync(dir, { recursive: true, force: true });
}

/**
 * Applies the D1 migrations to the local database under `persist` (wrangler d1 migrations apply),
 * those of the tree at `root` (this one by default).
 */
/** Migrates the local D1 databases: `DB` and the extra tenant shards of wrangler.toml (DB_SHARD_1, …). */
export function applyMigrations(persist: string, root = ROOT) {
  const toml = readFileSync(join(root, "wrangler.toml"), "utf8").split("[env.")[0]!;
  const shards = [...toml.matchAll(/binding = "(DB_SHARD_[0-9]+)"/g)].map((m) => m[1]!);
  for (const binding of ["DB", ...shards]) {
    const migrate = spawnSync("wrangler", ["d1", "migrations", "apply", binding, "--local", "--persist-to", persist], {
      cwd: root,
      env: WRANGLER_ENV,
      stdio: ["ignore", "ignore", "inherit"],
    });
    if (migrate.status !== 0) throw new Error(`wrangler d1 migrations apply ${binding} failed`);
  }
}

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error("wrangler dev did not come up within 2 minutes");
}

/** A running `wrangler dev`. */
export interface WorkerProcess {
  /** http://127.0.0.1:<port> */
  base: string;
  adminKey: string;
  /** Stops wrangler dev and the workerd it started (its process group). */
  stop(): void;
  /** The process group of wrangler dev and its workerd (for measuring their CPU time). */
  processGroup?: number;
}

/**
 * Bundles the Worker once (`wrangler deploy --dry-run --outdir`) and returns the bundle's entry.
 * `wrangler dev` on src/ would rebuild and reload the Worker whenever a source file changes, in
 * the middle of a run (and fail its requests meanwhile); on the bundle, a run measures one version
 * of the code, the one of its start.
 */
export function bundleWorker(outDir: string, root = ROOT): string {
  const r = spawnSync("wrangler", ["deploy", "--dry-run", "--outdir", outDir], {
    cwd: root,
    env: WRANGLER_ENV,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (r.status !== 0) throw new Error("wrangler deploy --dry-run (bundling the Worker) failed");
  return join(outDir, "index.js");
}

/**
 * Starts the Worker with `wrangler dev --local` on the state in `persist` (migrated already) and
 * waits for /health: by default on a bundle of the code made now (see bundleWorker), with `live`
 * on src/ as it changes. Its output goes to stderr only with `verbose`. `root` is the tree whose
 * code and wrangler.toml run (this one by default); `wrap` may put an entry module of its own
 * around the bundle (it gets the bundle's directory and returns its entry's path).
 */
export async function startWorker(
  persist: string,
  opts: {
    verbose?: boolean;
    live?: boolean;
    args?: string[];
    root?: string;
    /** The Wrangler configuration, when not the root's wrangler.toml (a variant of it). */
    config?: string;
    wrap?: (bundleDir: string) => string;
  } = {},
): Promise<WorkerProcess> {
  const root = opts.root ?? ROOT;
  const bundle = () => {
    const dir = join(persist, "worker-bundle");
    const entry = bundleWorker(dir, root);
    return opts.wrap ? opts.wrap(dir) : entry;
  };
  // With a script named, wrangler looks for its config next to it: name ours.
  const script = opts.live ? [] : [bundle(), "--no-bundle", "--config", opts.config ?? join(root, "wrangler.toml")];
  const dev = await launchWranglerDev(
    [...script, "--local", "--persist-to", persist, ...BENCH_SECRETS, ...(opts.args ?? [])],
    { verbose: opts.verbose ?? false, healthPath: "/health", cwd: root },
  );
  return { ...dev, adminKey: BENCH_ADMIN_KEY };
}

/**
 * `wrangler dev <args>` on a free port of 127.0.0.1, in its own process group (stopped at exit
 * or Ctrl-C), once `healthPath` answers 200.
 */
export async function launchWranglerDev(
  args: string[],
  opts: { verbose: boolean; healthPath: string; cwd?: string },
): Promise<Omit<WorkerProcess, "adminKey">> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const child = spawn(
    "wrangler",
    ["dev", ...args, "--port", String(port), "--ip", "127.0.0.1", "--show-interactive-dev-session=false"],
    // Its own process group, so stop() reaches workerd too.
    {
      cwd: opts.cwd ?? ROOT,
      env: WRANGLER_ENV,
      stdio: ["ignore", "ignore", opts.verbose ? "inherit" : "ignore"],
      detached: true,
    },
  );
  // Ctrl-C or a kill of the benchmark stops the Worker too (its process group is not ours).
  const onSignal = () => {
    stop();
    process.exit(130);
  };
  const stop = () => {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    process.off("exit", stop);
    if (child.pid && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  process.once("exit", stop);
  try {
    await waitForHealth(`${base}${opts.healthPath}`, child);
  } catch (err) {
    stop();
    throw err;
  }
  return { base, stop, processGroup: child.pid };
}
