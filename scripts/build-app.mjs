#!/usr/bin/env node
// Builds the dashboard (app/) into public/app/ with esbuild: one minified ES module (Preact,
// uPlot, the typed client), one stylesheet (ours + uPlot's) and index.html, served by the Worker's
// static assets at /app/. Runs on `npm install` (prepare): nothing is fetched from a CDN.
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const out = "public/app";
mkdirSync(out, { recursive: true });
await build({
  entryPoints: ["app/main.tsx"],
  outfile: `${out}/app.js`,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "none",
  logLevel: "warning",
});
const css = readFileSync("node_modules/uplot/dist/uPlot.min.css", "utf8") + readFileSync("app/styles.css", "utf8");
writeFileSync(`${out}/app.css`, css);
copyFileSync("app/index.html", `${out}/index.html`);

const size = (f) => gzipSync(readFileSync(f)).length;
const js = size(`${out}/app.js`);
const styles = size(`${out}/app.css`);
if (process.argv.includes("--size"))
  console.log(`dashboard: app.js ${(js / 1024).toFixed(1)} KiB gzip, app.css ${(styles / 1024).toFixed(1)} KiB gzip`);
