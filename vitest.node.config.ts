import { defineConfig } from "vitest/config";

/**
 * Tests that run in Node against the service as users reach it: `wrangler dev` started once for the
 * run (test-node/worker.global.ts), driven over HTTP by the typed client (and, later, the CLI).
 * `npm run test:node`; CI runs it after `npm test`.
 */
export default defineConfig({
  test: {
    include: ["test-node/**/*.test.ts"],
    environment: "node",
    globalSetup: ["./test-node/worker.global.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
