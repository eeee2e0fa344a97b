/**
 * bench/profile/ab.ts: the profiler of this tree against the one of another commit, on the
 * benchmark's files, in alternated fresh processes (once.ts): on a shared machine a single
 * bench:profile run moves by ±10 %, which hides a change of 5 %. Usage (see bench/README.md):
 *
 *   npm run bench:profile:ab -- --base HEAD~1 [--pairs 6] [--rows 1m] [--file csv|parquet|both]
 *
 * The base is checked out into a temporary git worktree (sharing this tree's node_modules) and
 * removed at the end. Each pair runs the base, then this tree; each process warms up once and
 * times one profile. The medians of the CPU seconds and their ratio are printed.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { DEFAULT_SEED, ensureDataSet } from "./dataset";
import { median, parseCount } from "./table";

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, "..", "..");
const DATA_DIR = join(HERE, "..", ".data");

const { values: args } = parseArgs({
  options: {
    base: { type: "string", default: "HEAD" },
    pairs: { type: "string", default: "6" },
    rows: { type: "string", default: "1000000" },
    file: { type: "string", default: "both" },
  },
});
const ROWS = parseCount(args.rows, "rows");
const PAIRS = parseCount(args.pairs, "pairs");
const FILES = args.file === "both" ? (["csv", "parquet"] as const) : ([args.file] as const);
for (const file of FILES)
  if (file !== "csv" && file !== "parquet") throw new Error("--file must be csv, parquet or both");

function git(...command: string[]): string {
  const r = spawnSync("git", command, { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`git ${command.join(" ")}: ${r.stderr.trim()}`);
  return r.stdout.trim();
}

/** CPU seconds of one fresh process profiling `path` with the tree at `root`. */
function measure(root: string, file: string, path: string): number {
  const r = spawnSync(
    "tsx",
    [join(HERE, "once.ts"), "--root", root, "--file", file, "--path", path, "--rows", String(ROWS)],
    { cwd: ROOT, encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`once.ts in ${root} failed: ${r.stderr.trim().split("\n").slice(-5).join("\n")}`);
  return JSON.parse(r.stdout.trim().split("\n").at(-1)!).cpuSeconds as number;
}

const data = ensureDataSet(DATA_DIR, ROWS, DEFAULT_SEED);
const commit = git("rev-parse", "--short", args.base);
const head = git("rev-parse", "--short", "HEAD");
const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
const worktree = join(mkdtempSync(join(tmpdir(), "bench-ab-")), "base");
git("worktree", "add", "--detach", "--quiet", worktree, commit);
try {
  symlinkSync(join(ROOT, "node_modules"), join(worktree, "node_modules"));
  console.log(
    `bench/profile/ab: base ${args.base} (${commit}) against this tree (${head}${dirty ? " with uncommitted changes" : ""}), ${PAIRS} pairs of fresh processes, ${ROWS.toLocaleString("en-US")} rows`,
  );
  for (const file of FILES) {
    const path = file === "csv" ? data.csv : data.parquet;
    const base: number[] = [];
    const ours: number[] = [];
    for (let pair = 0; pair < PAIRS; pair++) {
      base.push(measure(worktree, file, path));
      ours.push(measure(ROOT, file, path));
    }
    const line = (name: string, runs: number[]) =>
      `  ${name.padEnd(10)} median ${median(runs).toFixed(3)} cpu s   runs ${runs.map((s) => s.toFixed(2)).join(" / ")}`;
    console.log(`${file}:\n${line("base", base)}\n${line("this tree", ours)}`);
    console.log(`  this tree ÷ base: ${(median(ours) / median(base)).toFixed(3)}× CPU per profile`);
  }
} finally {
  git("worktree", "remove", "--force", worktree);
  rmSync(dirname(worktree), { recursive: true, force: true });
}
