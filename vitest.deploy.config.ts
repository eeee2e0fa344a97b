import { defineConfig } from "vitest/config";

/**
 * The deploy script's test (`npm run test:deploy`): scripts/deploy.ts run from a copy of the tree
 * against a local stand-in of the Cloudflare API (test-deploy/support/cloudflare). Node, one file,
 * its runs in order; each run starts wrangler a dozen times, hence the long timeouts.
 */
export default defineConfig({
  test: {
    include: ["test-deploy/**/*.test.ts"],
    environment: "node",
    testTimeout: 600_000,
    hookTimeout: 120_000,
    fileParallelism: false,
  },
});
