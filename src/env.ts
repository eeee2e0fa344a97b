import type { AssetMonitorRpc } from "./contracts/asset-monitor";
import type { NotificationMessage, ScanQueueMessage, ScanResultMessage } from "./contracts/messages";

/** Bindings, vars and secrets of the Worker: the one place they are declared (see wrangler.toml). */
export interface Env {
  /** The directory of tenant shards, and shard 0 (src/db/shards.ts). */
  DB: D1Database;
  /** Extra tenant shards (DB_SHARD_1, DB_SHARD_2, …): more D1 databases, named in wrangler.toml. */
  [shard: `DB_SHARD_${number}`]: D1Database | undefined;
  /** The shard new tenants are made on (a number of a bound shard; default 0, `DB`). */
  NEW_TENANT_SHARD?: string;
  ASSET_MONITOR: DurableObjectNamespace<AssetMonitorRpc>;
  SCAN_JOBS: Queue<ScanQueueMessage>;
  UPLOADS: R2Bucket;
  /** Accepted Spark callbacks, applied to the asset's monitor by their consumer. */
  SCAN_RESULTS: Queue<ScanResultMessage>;
  /** Incident events waiting to be delivered to notification channels. */
  NOTIFICATIONS: Queue<NotificationMessage>;
  /** Per-credential request budget (Workers rate-limiting binding). */
  RATE_LIMIT: RateLimit;
  /** Stricter budget for token minting and scan triggers. */
  RATE_LIMIT_STRICT: RateLimit;

  /** Platform administrator ("private cloud administrator") key. Secret. */
  ADMIN_API_KEY: string;
  /** The platform administrator's e-mail: recorded as created_by for what the admin key creates. */
  ADMIN_EMAIL?: string;
  /** HMAC key that signs the service's own JWTs. Secret. */
  TOKEN_SIGNING_SECRET: string;
  /** "keyId:base64key,..." AES-256-GCM keys for secrets at rest; the first one encrypts. Secret. */
  ENCRYPTION_KEYS: string;

  SERVICE_TOKEN_ISSUER: string;
  SERVICE_TOKEN_AUDIENCE: string;
  SERVICE_TOKEN_TTL_SECONDS: string;
  OIDC_ISSUER: string;
  OIDC_AUDIENCE: string;
  OIDC_JWKS_URL: string;
  /** Comma-separated JWS algorithms accepted from the OIDC issuer (never "none", never HS*). */
  OIDC_ALGORITHMS: string;
  /** "development" (wrangler dev, tests), "staging" or "production": see lib/environment.ts. */
  ENVIRONMENT?: string;
  /** "true" only in local development and tests: credentials may go to private/loopback targets. */
  ALLOW_PRIVATE_TARGETS?: string;
  /** The service's public origin (e.g. https://dq.example.com): links in notifications. */
  PUBLIC_BASE_URL?: string;
}
