#!/usr/bin/env node
// Copies the Scalar API reference bundle from node_modules into public/ (served as a Workers
// static asset), so /docs renders without reaching a CDN. Runs on `npm install` (prepare).
import { copyFileSync, existsSync, mkdirSync } from "node:fs";

const source = "node_modules/@scalar/api-reference/dist/browser/standalone.js";
if (!existsSync(source)) {
  console.error(`copy-assets: ${source} is missing; run npm install`);
  process.exit(1);
}
mkdirSync("public/docs", { recursive: true });
copyFileSync(source, "public/docs/scalar.js");
