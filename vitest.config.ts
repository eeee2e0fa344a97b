import { builtinModules, createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { configDefaults, defineConfig, type Plugin } from "vitest/config";

/**
 * Lets mysql2 (CommonJS) load inside workerd. The pool resolves its require() calls with the
 * ES "import" conditions, so `require("lru.min")` / `require("sql-escaper")` get ES builds, of which
 * workerd's require() yields only the (absent) default export: resolve them as Node's require()
 * does. And workerd has no CommonJS `node:process`: serve a shim exporting the global process.
 * mysql2's optional `require("cardinal")` gets a module that throws, as Node's require would.
 * (wrangler's esbuild bundle needs neither.)
 */
const MYSQL2_TREE = /\/node_modules\/(mysql2|named-placeholders)\//;
const mysql2InWorkerd: Plugin = {
  name: "mysql2-in-workerd",
  enforce: "pre",
  resolveId(id, importer, options) {
    if (!importer || !MYSQL2_TREE.test(importer)) return null;
    if (id === "process" || id === "node:process") {
      return fileURLToPath(new URL("./test/scan/sql/support/node-process.cjs", import.meta.url).href);
    }
    if (id === "cardinal") {
      return fileURLToPath(new URL("./test/scan/sql/support/no-cardinal.cjs", import.meta.url).href);
    }
    const isRequire = (options.custom?.["node-resolve"] as { isRequire?: boolean } | undefined)?.isRequire;
    if (!isRequire || id.startsWith(".") || id.startsWith("node:") || builtinModules.includes(id)) return null;
    return createRequire(importer.replace(/\?.*$/, "")).resolve(id);
  },
};

/**
 * Two lanes, as two projects: `npm test` runs both, `npm test -- <files>` runs the given files in
 * their own lanes (a lane with none of them is skipped, global setup included).
 * - unit (vitest.unit.config.ts): `test/**\/*.unit.test.ts`, pure code in plain Node.
 * - workerd (below): every other `test/**\/*.test.ts`, inside the Workers runtime against real
 *   bindings (D1, R2, Durable Objects, queues), behind the global setups' servers and fakes.
 */
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    // workerd's require() and import fallbacks are resolved by the root's Vite server (the pool's
    // module fallback service), not the project's: mysql2's resolution goes at both levels.
    plugins: [mysql2InWorkerd],
    test: {
      projects: [
        "./vitest.unit.config.ts",
        {
          plugins: [
            mysql2InWorkerd,
            cloudflareTest({
              wrangler: { configPath: "./wrangler.toml" },
              miniflare: {
                bindings: {
                  TEST_MIGRATIONS: migrations,
                  ADMIN_API_KEY: "test-admin-key",
                  TOKEN_SIGNING_SECRET: "test-token-signing-secret-0123456789abcdef",
                  ENCRYPTION_KEYS: "t1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
                  // The tests talk to emulators and fakes on 127.0.0.1.
                  ALLOW_PRIVATE_TARGETS: "true",
                },
              },
            }),
          ],
          test: {
            name: "workerd",
            include: ["test/**/*.test.ts"],
            exclude: [...configDefaults.exclude, "test/**/*.unit.test.ts"],
            setupFiles: ["./test/support/setup.ts"],
            // A guard against a hung test, not a measure of speed: on a 2-core machine under load several
            // tests of many round trips took 5-8 s against vitest's default 5 s.
            testTimeout: 20_000,
            globalSetup: [
              "./test/support/global-setup.ts",
              "./test/support/object-stores.global.ts",
              // After object-stores: it writes its Iceberg tables into those servers.
              "./test/support/iceberg.global.ts",
              "./test/support/warehouses.global.ts",
              "./test/support/jira.global.ts",
              "./test/support/traps.global.ts",
              "./test/support/receivers.global.ts",
              "./test/support/spark-providers.global.ts",
              "./test/support/driver-replay.global.ts",
            ],
          },
        },
      ],
    },
  };
});
