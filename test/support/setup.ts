import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";

// Every test file starts from the migrated schema (applyD1Migrations skips what is applied).
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
// The second tenant shard (wrangler.toml, DB_SHARD_1): the same schema.
await applyD1Migrations(env.DB_SHARD_1!, env.TEST_MIGRATIONS);
