#!/usr/bin/env node
// Bundles the `dq` command-line tool (cli/dq.ts) into dist/dq.mjs, the package's `bin`, with
// esbuild. Runs on `npm install` (prepare), so `npx dq` works on a fresh clone.
import { chmodSync } from "node:fs";
import { build } from "esbuild";

await build({
  entryPoints: ["cli/dq.ts"],
  outfile: "dist/dq.mjs",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  // CommonJS dependencies (cli-progress) require Node's built-ins: give the bundle a require().
  banner: {
    js: '#!/usr/bin/env node\nimport { createRequire as __dqCreateRequire } from "node:module";\nconst require = __dqCreateRequire(import.meta.url);',
  },
  logLevel: "warning",
});
chmodSync("dist/dq.mjs", 0o755);
