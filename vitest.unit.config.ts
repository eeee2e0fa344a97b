import { defineConfig } from "vitest/config";

/**
 * The unit lane: tests of pure code, named `*.unit.test.ts` and kept next to the workerd tests of
 * the same area under test/. They run in plain Node: no workerd, no bindings, no global setup (the
 * workerd lane's 1-2 minutes of start-up), `npm run test:unit`. test/lanes.unit.test.ts checks that no unit file
 * reaches a `cloudflare:*` module or a global setup's values, and that no workerd file could run
 * here. `npm test` runs this lane and the workerd one (vitest.config.ts lists both as projects).
 */
export default defineConfig({
  test: {
    name: "unit",
    include: ["test/**/*.unit.test.ts"],
    environment: "node",
    // A worker thread keeps the modules it loaded from file to file (no process or module graph per
    // file): the files test pure functions and restore what they spy on, so none needs a
    // fresh copy. On this 2-core machine that took the lane from 36.5 s of CPU to 21 s.
    pool: "threads",
    isolate: false,
    // As in the workerd lane: a guard against a hung test on a loaded 2-core machine, not a measure of speed.
    testTimeout: 20_000,
  },
});
