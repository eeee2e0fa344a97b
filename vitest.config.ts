import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-pool-workers";
import { defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_API_KEY: "test-admin-key",
            TOKEN_SIGNING_SECRET: "test-token-signing-secret-0123456789abcdef",
            ENCRYPTION_KEYS: "t1:MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
          },
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      setupFiles: ["./test/support/setup.ts"],
      globalSetup: ["./test/support/global-setup.ts", "./test/support/object-stores.global.ts"],
    },
  };
});
