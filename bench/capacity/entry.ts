/**
 * bench/capacity: the entry module the bench runs instead of the Worker's own, around its bundle
 * (made by `wrangler deploy --dry-run`, untouched): the default export's handlers and every Durable
 * Object class of the tree's wrangler.toml, with their D1 bindings metered (meter.ts).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { buildSync } from "esbuild";

const HERE = dirname(fileURLToPath(import.meta.url));

/** The Durable Object classes a wrangler.toml binds (`class_name = "…"`). */
export function objectClasses(wranglerToml: string): string[] {
  const text = readFileSync(wranglerToml, "utf8");
  const names = [...text.matchAll(/^\s*class_name\s*=\s*"([A-Za-z_$][\w$]*)"/gm)].map((m) => m[1]!);
  return [...new Set(names)];
}

/**
 * Writes entry.js into `bundleDir` (beside the bundle's index.js) and bundles it with meter.ts
 * into one module, metered.js, whose path it returns, for `wrangler dev <it> --no-bundle`
 * (wrangler's --no-bundle takes one module unless its config lists more). esbuild only joins
 * the modules: the runtime's own (cloudflare:*, node:*, the bare Node built-ins that nodejs_compat
 * provides) stay imports.
 */
export function wrapWithMeter(bundleDir: string, wranglerToml: string): string {
  const classes = objectClasses(wranglerToml);
  const entry = [
    'import { withEnv } from "cloudflare:workers";',
    'import * as worker from "./index.js";',
    `import { meteredHandlers, meteredObject } from ${JSON.stringify(join(HERE, "meter.ts"))};`,
    'export * from "./index.js";',
    "export default meteredHandlers(worker.default, withEnv);",
    ...classes.map((name) => `export const ${name} = meteredObject(worker.${name}, ${JSON.stringify(name)}, withEnv);`),
    "",
  ].join("\n");
  writeFileSync(join(bundleDir, "entry.js"), entry);
  const out = join(bundleDir, "metered.js");
  buildSync({
    entryPoints: [join(bundleDir, "entry.js")],
    outfile: out,
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    external: ["cloudflare:*", "node:*", ...builtinModules],
    logLevel: "error",
  });
  return out;
}
