#!/usr/bin/env node
// Runs a command with a Node.js new enough for wrangler (>= 22.12).
// On an older Node (machines here ship 20), fetches node-<os>-<arch>@22 from the npm
// registry into .cache/node once and puts it first on PATH; on a recent Node it only
// adds node_modules/.bin to PATH and runs the command.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const MIN = [22, 12];
const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  console.error("usage: node scripts/node22.mjs <command> [args...]");
  process.exit(2);
}

const [major, minor] = process.versions.node.split(".").map(Number);
const recentEnough = major > MIN[0] || (major === MIN[0] && minor >= MIN[1]);
const paths = [join(root, "node_modules", ".bin")];

if (!recentEnough) {
  const platform = { linux: "linux", darwin: "darwin", win32: "win" }[process.platform];
  const pkg = `node-${platform}-${process.arch}`;
  const cache = join(root, ".cache", "node");
  const bin = join(cache, "node_modules", pkg, "bin");
  if (!existsSync(join(bin, "node"))) {
    console.error(`node ${process.versions.node} is older than ${MIN.join(".")}: fetching ${pkg}@22 into .cache/node`);
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const r = spawnSync(npm, ["install", "--prefix", cache, "--no-save", "--no-audit", "--no-fund", `${pkg}@22`], {
      stdio: "inherit",
    });
    if (r.status !== 0 || !existsSync(join(bin, "node"))) {
      console.error(`could not install ${pkg}@22 from the npm registry`);
      process.exit(1);
    }
  }
  paths.unshift(bin);
}

const sep = process.platform === "win32" ? ";" : ":";
const env = { ...process.env, PATH: [...paths, process.env.PATH].join(sep) };
const r = spawnSync(cmd, args, { stdio: "inherit", env, cwd: process.cwd() });
if (r.error) {
  console.error(r.error.message);
  process.exit(1);
}
process.exit(r.status ?? 1);
