/**
 * Request shapes of the Cloudflare API operations the deploy script's wrangler commands call, as
 * Cloudflare's API reference documents them (developers.cloudflare.com/api, the operation named
 * beside each schema; the same definitions the official `cloudflare` SDK is generated from). Bodies
 * are strict where the reference lists every field, and names follow the rules the services state.
 */
import { z } from "zod";

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

// D1 ------------------------------------------------------------------------------------------

/** d1.database.list: GET /accounts/{account_id}/d1/database */
export const d1ListQuery = z.strictObject({
  name: z.string().optional(),
  page: int(1, 1_000_000).optional(),
  per_page: int(10, 10_000).optional(),
});

/** d1.database.create: POST /accounts/{account_id}/d1/database */
export const d1CreateBody = z.strictObject({
  name: z.string().min(1).max(64),
  jurisdiction: z.enum(["eu", "fedramp", "us"]).optional(),
  primary_location_hint: z.enum(["wnam", "enam", "weur", "eeur", "apac", "oc"]).optional(),
  read_replication: z.strictObject({ mode: z.enum(["auto", "disabled"]) }).optional(),
});

const d1Statement = z.strictObject({
  sql: z.string().min(1),
  params: z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
});

/** d1.database.query / raw: POST …/d1/database/{database_id}/query|raw — one statement or a batch. */
export const d1QueryBody = z.union([d1Statement, z.strictObject({ batch: z.array(d1Statement).min(1) })]);

// R2 ------------------------------------------------------------------------------------------

/** Bucket names: 3–63 characters, lowercase letters, digits and hyphens, starting and ending with a letter or digit. */
const bucketName = z.string().regex(/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/, "not a valid R2 bucket name");

/** r2.buckets.list: GET /accounts/{account_id}/r2/buckets */
export const r2ListQuery = z.strictObject({
  cursor: z.string().optional(),
  direction: z.enum(["asc", "desc"]).optional(),
  name_contains: z.string().optional(),
  order: z.enum(["name"]).optional(),
  per_page: int(1, 1000).optional(),
  start_after: z.string().optional(),
});

/** r2.buckets.create: POST /accounts/{account_id}/r2/buckets (jurisdiction in the cf-r2-jurisdiction header). */
export const r2CreateBody = z.strictObject({
  name: bucketName,
  locationHint: z.enum(["apac", "eeur", "enam", "weur", "wnam", "oc"]).optional(),
  storageClass: z.enum(["Standard", "InfrequentAccess"]).optional(),
});
export const r2Jurisdiction = z.enum(["default", "eu", "us", "fedramp", "fedramp-high"]);

// Queues --------------------------------------------------------------------------------------

/** Queue names: lowercase letters, digits and hyphens, at most 63. */
const queueName = z.string().regex(/^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/, "not a valid queue name");

/** queues.list: GET /accounts/{account_id}/queues (page pagination; wrangler also filters by name). */
export const queuesListQuery = z.strictObject({
  page: int(1, 1_000_000).optional(),
  per_page: int(1, 1000).optional(),
  name: z.string().optional(),
});

/** queues.create: POST /accounts/{account_id}/queues */
export const queueCreateBody = z.strictObject({
  queue_name: queueName,
  jurisdiction: z.enum(["eu", "us", "fedramp"]).optional(),
});

/** queues.consumers.create / update: POST|PUT /accounts/{account_id}/queues/{queue_id}/consumers[/{consumer_id}] (a Worker consumer). */
export const consumerBody = z.strictObject({
  type: z.literal("worker"),
  script_name: z.string().min(1),
  dead_letter_queue: queueName.optional(),
  settings: z
    .strictObject({
      batch_size: z.number().int().min(1).max(100).optional(),
      max_concurrency: z.number().int().min(1).max(250).nullable().optional(),
      max_retries: z.number().int().min(0).max(100).optional(),
      max_wait_time_ms: z.number().int().min(0).max(60_000).optional(),
      retry_delay: z.number().int().min(0).max(43_200).optional(),
    })
    .optional(),
});

// Workers -------------------------------------------------------------------------------------

/** workers.scripts.secrets.update: PUT …/workers/scripts/{script_name}/secrets */
export const secretBody = z.strictObject({
  name: z.string().min(1),
  text: z.string(),
  type: z.literal("secret_text"),
});

/** workers.scripts.deployments.create: POST …/workers/scripts/{script_name}/deployments */
export const deploymentBody = z.strictObject({
  strategy: z.literal("percentage"),
  versions: z
    .array(z.strictObject({ version_id: z.string().uuid(), percentage: z.number().min(0).max(100) }))
    .min(1)
    .max(2),
  force: z.boolean().optional(),
  annotations: z.strictObject({ "workers/message": z.string().max(100).optional() }).optional(),
  // Newer than the SDK's types: how Durable Objects pick up new code (wrangler sends it).
  code_update_strategy: z.strictObject({ mode: z.string(), max_delay: z.number().optional() }).optional(),
});

/** workers.scripts.settings.edit: PATCH …/workers/scripts/{script_name}/script-settings */
export const scriptSettingsBody = z.strictObject({
  logpush: z.boolean().optional(),
  observability: z.record(z.string(), z.unknown()).nullable().optional(),
  tags: z.array(z.string()).nullable().optional(),
  tail_consumers: z.array(z.unknown()).nullable().optional(),
});

/** workers.scripts.secrets.bulk_update: PATCH …/workers/scripts/{script_name}/secrets-bulk (merge-patch: null deletes). */
export const secretsBulkBody = z.strictObject({
  secrets: z.record(z.string().min(1), secretBody.omit({}).nullable()).optional(),
  version_tags: z.record(z.string(), z.unknown()).optional(),
});

/** workers.scripts.schedules.update: PUT …/workers/scripts/{script_name}/schedules */
export const schedulesBody = z.array(z.strictObject({ cron: z.string().min(1) }));

/** workers.scripts.subdomain.create: POST …/workers/scripts/{script_name}/subdomain */
export const subdomainBody = z.strictObject({
  enabled: z.boolean(),
  previews_enabled: z.boolean().optional(),
});

/** workers.scripts.assets.upload.create: POST …/workers/scripts/{script_name}/assets-upload-session */
export const assetManifest = z.record(
  z.string().startsWith("/"),
  z.strictObject({ hash: z.string().regex(/^[0-9a-f]{32}$/), size: z.number().int().min(0) }),
);
export type AssetManifest = z.infer<typeof assetManifest>;
export const assetsSessionBody = z.strictObject({ manifest: assetManifest });

/** The bindings of an upload's metadata this service uses (and secrets, kept or sent). */
const binding = z.discriminatedUnion("type", [
  z.strictObject({ type: z.literal("plain_text"), name: z.string(), text: z.string() }),
  z.strictObject({ type: z.literal("secret_text"), name: z.string(), text: z.string() }),
  z.strictObject({ type: z.literal("json"), name: z.string(), json: z.unknown() }),
  z
    .strictObject({
      type: z.literal("d1"),
      name: z.string(),
      id: z.string().uuid().optional(),
      database_id: z.string().uuid().optional(),
    })
    .transform((b) => ({ type: b.type, name: b.name, id: (b.id ?? b.database_id)! }))
    .refine((b) => b.id !== undefined, "a d1 binding needs its database's id"),
  z.strictObject({
    type: z.literal("r2_bucket"),
    name: z.string(),
    bucket_name: bucketName,
    jurisdiction: z.enum(["eu", "fedramp", "fedramp-high", "us"]).optional(),
  }),
  z.strictObject({
    type: z.literal("durable_object_namespace"),
    name: z.string(),
    class_name: z.string(),
    script_name: z.string().optional(),
    environment: z.string().optional(),
  }),
  z.strictObject({ type: z.literal("queue"), name: z.string(), queue_name: queueName }),
  z.strictObject({
    type: z.literal("ratelimit"),
    name: z.string(),
    namespace_id: z.string().regex(/^\d+$/),
    simple: z.strictObject({ limit: z.number().int().min(1), period: z.union([z.literal(10), z.literal(60)]) }),
  }),
  z.strictObject({ type: z.literal("assets"), name: z.string() }),
  z.strictObject({
    type: z.literal("inherit"),
    name: z.string(),
    old_name: z.string().optional(),
    version_id: z.string().optional(),
  }),
]);
export type Binding = z.infer<typeof binding>;

const migrationStep = z.strictObject({
  new_classes: z.array(z.string()).optional(),
  new_sqlite_classes: z.array(z.string()).optional(),
  deleted_classes: z.array(z.string()).optional(),
  renamed_classes: z.array(z.strictObject({ from: z.string(), to: z.string() })).optional(),
  transferred_classes: z
    .array(z.strictObject({ from: z.string(), from_script: z.string(), to: z.string() }))
    .optional(),
});

export type MigrationStep = z.infer<typeof migrationStep>;

/** workers.scripts.update: PUT …/workers/scripts/{script_name}, the `metadata` part. */
export const workerMetadata = z.object({
  main_module: z.string().min(1),
  compatibility_date: z
    .string()
    .regex(/^\d{4}-\d{2}-\d{2}$/)
    .optional(),
  compatibility_flags: z.array(z.string()).optional(),
  bindings: z.array(binding).optional(),
  keep_bindings: z.array(z.string()).optional(),
  keep_assets: z.boolean().optional(),
  assets: z.object({ jwt: z.string().optional(), config: z.record(z.string(), z.unknown()).optional() }).optional(),
  annotations: z
    .strictObject({ "workers/message": z.string().max(100).optional(), "workers/tag": z.string().max(100).optional() })
    .optional(),
  migrations: z
    .union([
      migrationStep.extend({ new_tag: z.string().optional(), old_tag: z.string().optional() }),
      z.strictObject({ new_tag: z.string().optional(), old_tag: z.string().optional(), steps: z.array(migrationStep) }),
    ])
    .optional(),
  placement: z.record(z.string(), z.unknown()).optional(),
  observability: z.record(z.string(), z.unknown()).optional(),
  tail_consumers: z.array(z.unknown()).nullable().optional(),
  usage_model: z.enum(["standard", "bundled", "unbound"]).optional(),
  logpush: z.boolean().optional(),
  limits: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
});
export type WorkerMetadata = z.infer<typeof workerMetadata>;

/** workers.scripts.script_and_version_settings.edit: PATCH …/workers/scripts/{script_name}/settings (`settings` part). */
export const settingsPatch = z.object({
  bindings: z.array(binding).optional(),
  compatibility_date: z.string().optional(),
  compatibility_flags: z.array(z.string()).optional(),
  keep_bindings: z.array(z.string()).optional(),
  observability: z.record(z.string(), z.unknown()).optional(),
  tags: z.array(z.string()).optional(),
});
