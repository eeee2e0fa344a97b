/**
 * A local stand-in of the Cloudflare API (https://api.cloudflare.com/client/v4), for the deploy
 * script's test: wrangler reads CLOUDFLARE_API_BASE_URL and talks to this server instead. It
 * answers the operations the script's wrangler commands call, as Cloudflare's public API reference
 * documents them (the request schemas are in schemas.ts, each naming its operation), refuses what
 * the reference would refuse (unknown or missing fields, names the service does not allow,
 * duplicates), records every call, and can be told to fail one, to test a run that stops halfway.
 *
 * Resources live in memory; D1 databases, R2 buckets and the uploaded Workers run in one Miniflare
 * (workers.ts), so the SQL that `wrangler d1 migrations apply --remote` sends and the bundle that
 * `wrangler deploy` uploads meet the same database, and the deployed Worker answers HTTP on the
 * stand-in's workers.dev gateway.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { z } from "zod";
import * as S from "./schemas";
import { type DeployedVersion, WorkersRuntime } from "./workers";

/** One request the stand-in received: what was asked, and what it answered. */
export interface ApiCall {
  method: string;
  /** The path under /client/v4, with the account id as `:account`. */
  path: string;
  query: Record<string, string>;
  status: number;
  /** The operation it matched (the reference's name for it), or undefined when it matched none. */
  operation?: string;
  /** A D1 query that changed the database (D1's meta.changed_db). */
  changedDb?: boolean;
}

/** A failure to inject: the first call matching `when` gets `status` and a Cloudflare error, `times` times. */
export interface Fault {
  when: (call: { method: string; path: string; operation: string }) => boolean;
  times?: number;
  status?: number;
}

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface D1Record {
  uuid: string;
  name: string;
  created_at: string;
  jurisdiction?: string;
  primary_location_hint?: string;
}
interface QueueRecord {
  queue_id: string;
  queue_name: string;
  created_on: string;
  modified_on: string;
  consumers: ConsumerRecord[];
}
interface ConsumerRecord {
  consumer_id: string;
  script: string;
  type: "worker";
  dead_letter_queue?: string;
  settings: Record<string, number | null | undefined>;
  created_on: string;
}
interface ScriptRecord {
  id: string;
  created_on: string;
  modified_on: string;
  secrets: Map<string, string>;
  versions: DeployedVersion[];
  /** The version id serving all traffic. */
  deployed?: string;
  deployments: Array<{ id: string; created_on: string; version_id: string; source: string; message?: string }>;
  migration_tag?: string;
  /** Durable Object classes created by migrations and not deleted. */
  durable_classes: Set<string>;
  schedules: Array<{ cron: string; created_on: string; modified_on: string }>;
  workers_dev: boolean;
  previews_enabled: boolean;
  tags: string[];
}

type Handler = (req: {
  params: Record<string, string>;
  query: Record<string, string>;
  /** The query with repeated keys (list filters take several `name`s). */
  search: URLSearchParams;
  body: Buffer;
  headers: IncomingMessage["headers"];
}) => Promise<Reply> | Reply;
interface Reply {
  status?: number;
  changedDb?: boolean;
  result: unknown;
  result_info?: Record<string, unknown>;
  /** A raw body instead of the envelope. */
  raw?: { contentType: string; body: string | Buffer };
}
interface Route {
  method: string;
  pattern: RegExp;
  keys: string[];
  operation: string;
  handler: Handler;
}

const now = () => new Date().toISOString();

/** Parses a JSON body against a schema of the reference: 400 with Cloudflare's error shape otherwise. */
function parseBody<T extends z.ZodType>(schema: T, body: Buffer): z.infer<T> {
  let json: unknown;
  try {
    json = JSON.parse(body.toString("utf8"));
  } catch {
    throw new ApiError(400, 10026, "Request body is not valid JSON");
  }
  return parseWith(schema, json);
}

function parseWith<T extends z.ZodType>(schema: T, value: unknown): z.infer<T> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(body)"}: ${i.message}`).join("; ");
    throw new ApiError(400, 10026, `Invalid request: ${issues}`);
  }
  return parsed.data;
}

export class CloudflareApiStandIn {
  readonly accountId = randomBytes(16).toString("hex");
  readonly token = randomBytes(20).toString("base64url");
  /** The account's workers.dev subdomain: a Worker is served at https://<script>.<subdomain>.workers.dev. */
  readonly subdomain = "dq-standin";
  readonly calls: ApiCall[] = [];
  /** Requests no route matched: the stand-in lacks an operation wrangler uses (a test failure). */
  readonly unknown: string[] = [];

  readonly databases = new Map<string, D1Record>();
  readonly buckets = new Map<
    string,
    { name: string; creation_date: string; location?: string; storage_class: string }
  >();
  readonly queues = new Map<string, QueueRecord>();
  readonly scripts = new Map<string, ScriptRecord>();
  /** Upload sessions of static assets: jwt → manifest, and the completion tokens they end in. */
  private readonly assetSessions = new Map<
    string,
    { script: string; manifest: S.AssetManifest; missing: Set<string> }
  >();
  private readonly completions = new Map<string, S.AssetManifest>();
  private readonly assetContents = new Map<string, Buffer>();

  private readonly routes: Route[] = [];
  private readonly faults: Array<Required<Fault>> = [];
  private server?: Server;
  private gateway?: Server;
  readonly runtime: WorkersRuntime;
  /** http://127.0.0.1:<port>/client/v4, for CLOUDFLARE_API_BASE_URL. */
  apiBase = "";
  /** http://127.0.0.1:<port>: serves each deployed Worker by its workers.dev Host header. */
  gatewayOrigin = "";

  constructor(stateDir: string) {
    this.runtime = new WorkersRuntime(stateDir);
    this.defineRoutes();
  }

  /** Makes the next matching call(s) fail with a 500 (or `status`) and Cloudflare's error envelope. */
  fail(fault: Fault) {
    this.faults.push({ times: 1, status: 500, ...fault });
  }

  /** The calls that changed something: every successful one but reads and D1 queries that changed nothing. */
  writes(): ApiCall[] {
    return this.calls.filter(
      (c) => c.method !== "GET" && c.status < 400 && !(c.operation === "d1.database.query" && c.changedDb === false),
    );
  }

  workersDevHost(script: string) {
    return `${script}.${this.subdomain}.workers.dev`;
  }

  async start() {
    this.server = createServer((req, res) => void this.serve(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
    this.apiBase = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/client/v4`;
    this.gateway = createServer((req, res) => void this.serveWorker(req, res));
    await new Promise<void>((resolve) => this.gateway!.listen(0, "127.0.0.1", resolve));
    this.gatewayOrigin = `http://127.0.0.1:${(this.gateway.address() as AddressInfo).port}`;
  }

  async stop() {
    await new Promise((resolve) => this.server?.close(resolve));
    await new Promise((resolve) => this.gateway?.close(resolve));
    await this.runtime.dispose();
  }

  // ---------------------------------------------------------------------------------------------
  // Routing, authentication, the envelope

  private route(method: string, path: string, operation: string, handler: Handler) {
    const keys: string[] = [];
    const pattern = new RegExp(
      `^${path.replace(/:([a-z_]+)/g, (_, key: string) => {
        keys.push(key);
        return "([^/]+)";
      })}$`,
    );
    this.routes.push({ method, pattern, keys, operation, handler });
  }

  private async serve(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url ?? "/", "http://stand-in");
    const query = Object.fromEntries(url.searchParams);
    const method = req.method ?? "GET";
    const path = url.pathname.replace(/^\/client\/v4/, "");
    const call: ApiCall = { method, path: path.replace(this.accountId, ":account"), query, status: 0 };
    this.calls.push(call);
    const send = (status: number, payload: unknown, contentType = "application/json") => {
      call.status = status;
      res.writeHead(status, { "content-type": contentType });
      res.end(typeof payload === "string" || Buffer.isBuffer(payload) ? payload : JSON.stringify(payload));
    };
    const failure = (status: number, code: number, message: string) =>
      send(status, { success: false, errors: [{ code, message }], messages: [], result: null });
    try {
      const match = this.match(method, path);
      if (!match) {
        this.unknown.push(`${method} ${call.path}${url.search}`);
        return failure(404, 7003, "Could not route to the requested path: the stand-in has no such operation");
      }
      call.operation = match.route.operation;
      this.authenticate(req, path, match.route.operation);
      const fault = this.faults.find(
        (f) => f.times > 0 && f.when({ method, path: call.path, operation: call.operation! }),
      );
      if (fault) {
        fault.times--;
        return failure(fault.status, 10013, "An unknown error has occurred (injected by the test)");
      }
      const reply = await match.route.handler({
        params: match.params,
        query,
        search: url.searchParams,
        body,
        headers: req.headers,
      });
      if (reply.changedDb !== undefined) call.changedDb = reply.changedDb;
      if (reply.raw) return send(reply.status ?? 200, reply.raw.body, reply.raw.contentType);
      send(reply.status ?? 200, {
        success: true,
        errors: [],
        messages: [],
        result: reply.result,
        ...(reply.result_info ? { result_info: reply.result_info } : {}),
      });
    } catch (err) {
      if (err instanceof ApiError) return failure(err.status, err.code, err.message);
      failure(500, 10000, `stand-in failure: ${(err as Error).stack ?? err}`);
    }
  }

  private match(method: string, path: string) {
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const m = route.pattern.exec(path);
      if (!m) continue;
      const params = Object.fromEntries(route.keys.map((k, i) => [k, decodeURIComponent(m[i + 1]!)]));
      return { route, params };
    }
    return undefined;
  }

  /** An API token as a Bearer header, and only this account (the assets upload takes its session's JWT instead). */
  private authenticate(req: IncomingMessage, path: string, operation: string) {
    const auth = req.headers.authorization ?? "";
    if (operation === "workers.assets.upload") return;
    if (auth !== `Bearer ${this.token}`) throw new ApiError(403, 9109, "Invalid access token");
    const account = /^\/accounts\/([^/]+)/.exec(path)?.[1];
    if (account !== undefined && account !== this.accountId) throw new ApiError(403, 10000, "Authentication error");
  }

  private script(name: string): ScriptRecord {
    const script = this.scripts.get(name);
    if (!script)
      throw new ApiError(
        404,
        10007,
        `This Worker does not exist on your account. [workers.api.error.script_not_found]`,
      );
    return script;
  }

  private queueById(id: string): QueueRecord {
    for (const q of this.queues.values()) if (q.queue_id === id) return q;
    throw new ApiError(404, 11000, "No such queue");
  }

  private database(uuid: string): D1Record {
    const db = this.databases.get(uuid);
    if (!db) throw new ApiError(404, 7404, `The database ${uuid} could not be found`);
    return db;
  }

  // ---------------------------------------------------------------------------------------------
  // Operations

  private defineRoutes() {
    const A = "/accounts/:account";

    // Tokens: verify (wrangler asks before commands that need an account).
    this.route("GET", "/user/tokens/verify", "user.tokens.verify", () => ({
      result: { id: "standin-token", status: "active" },
    }));
    this.route("GET", "/user", "user.get", () => ({
      result: { id: "standin-user", email: "standin@example.com" },
    }));
    this.route("GET", "/accounts", "accounts.list", () => ({
      result: [{ id: this.accountId, name: "stand-in account" }],
      result_info: { page: 1, per_page: 20, count: 1, total_count: 1 },
    }));
    this.route("GET", "/memberships", "memberships.list", () => ({
      result: [{ id: "m1", account: { id: this.accountId, name: "stand-in account" } }],
    }));

    // D1 (reference: d1.database.list / create / get / query / raw)
    this.route("GET", `${A}/d1/database`, "d1.database.list", ({ query }) => {
      const q = parseWith(S.d1ListQuery, query);
      const all = [...this.databases.values()]
        .filter((d) => q.name === undefined || d.name.includes(q.name))
        .map((d) => this.d1View(d));
      return paged(all, q.page, q.per_page);
    });
    this.route("POST", `${A}/d1/database`, "d1.database.create", async ({ body }) => {
      const b = parseBody(S.d1CreateBody, body);
      for (const d of this.databases.values()) {
        if (d.name === b.name) throw new ApiError(400, 7502, "A database with that name already exists");
      }
      const record: D1Record = {
        uuid: randomUUID(),
        name: b.name,
        created_at: now(),
        ...(b.jurisdiction ? { jurisdiction: b.jurisdiction } : {}),
        ...(b.primary_location_hint ? { primary_location_hint: b.primary_location_hint } : {}),
      };
      this.databases.set(record.uuid, record);
      this.runtime.addDatabase(record.uuid);
      return { result: this.d1View(record) };
    });
    this.route("GET", `${A}/d1/database/:uuid`, "d1.database.get", ({ params }) => ({
      result: this.d1View(this.database(params.uuid!)),
    }));
    const d1Query =
      (raw: boolean) =>
      async ({ params, body }: { params: Record<string, string>; body: Buffer }) => {
        this.database(params.uuid!);
        const b = parseBody(S.d1QueryBody, body);
        const statements = "batch" in b ? b.batch : [b];
        const results = [];
        for (const s of statements)
          results.push(...(await this.runtime.query(params.uuid!, s.sql, s.params ?? [], raw)));
        return {
          result: results,
          changedDb: results.some((r) => (r.meta as { changed_db?: boolean }).changed_db === true),
        };
      };
    this.route("POST", `${A}/d1/database/:uuid/query`, "d1.database.query", d1Query(false));
    this.route("POST", `${A}/d1/database/:uuid/raw`, "d1.database.raw", d1Query(true));

    // R2 buckets (reference: r2.buckets.list / create / get)
    this.route("GET", `${A}/r2/buckets`, "r2.buckets.list", ({ query }) => {
      const q = parseWith(S.r2ListQuery, query);
      let all = [...this.buckets.values()].sort((a, b) => a.name.localeCompare(b.name));
      if (q.direction === "desc") all.reverse();
      if (q.name_contains) all = all.filter((b) => b.name.includes(q.name_contains!));
      if (q.start_after) all = all.filter((b) => b.name > q.start_after!);
      const start = q.cursor ? Number(Buffer.from(q.cursor, "base64url").toString()) : 0;
      const perPage = q.per_page ?? 20;
      const page = all.slice(start, start + perPage);
      const next =
        start + perPage < all.length ? Buffer.from(String(start + perPage)).toString("base64url") : undefined;
      return { result: { buckets: page }, result_info: { cursor: next ?? "", per_page: perPage } };
    });
    this.route("POST", `${A}/r2/buckets`, "r2.buckets.create", async ({ body, headers }) => {
      const b = parseBody(S.r2CreateBody, body);
      const jurisdiction = headers["cf-r2-jurisdiction"];
      if (jurisdiction !== undefined) parseWith(S.r2Jurisdiction, jurisdiction);
      if (this.buckets.has(b.name)) {
        throw new ApiError(409, 10004, "The bucket you tried to create already exists, and you own it.");
      }
      const bucket = {
        name: b.name,
        creation_date: now(),
        storage_class: b.storageClass ?? "Standard",
        ...(b.locationHint ? { location: b.locationHint.toUpperCase() } : {}),
      };
      this.buckets.set(b.name, bucket);
      this.runtime.addBucket(b.name);
      return { result: bucket };
    });
    this.route("GET", `${A}/r2/buckets/:name`, "r2.buckets.get", ({ params }) => {
      const bucket = this.buckets.get(params.name!);
      if (!bucket) throw new ApiError(404, 10006, "The specified bucket does not exist.");
      return { result: bucket };
    });

    // Queues (reference: queues.list / create / get; queues.consumers.*)
    this.route("GET", `${A}/queues`, "queues.list", ({ query, search }) => {
      const q = parseWith(S.queuesListQuery, query);
      const names = search.getAll("name");
      const all = [...this.queues.values()]
        .filter((x) => names.length === 0 || names.includes(x.queue_name))
        .map((x) => this.queueView(x));
      return paged(all, q.page, q.per_page ?? 100);
    });
    this.route("POST", `${A}/queues`, "queues.create", ({ body }) => {
      const b = parseBody(S.queueCreateBody, body);
      for (const q of this.queues.values()) {
        if (q.queue_name === b.queue_name) {
          throw new ApiError(409, 11009, `A queue with name ${b.queue_name} already exists`);
        }
      }
      const record: QueueRecord = {
        queue_id: randomBytes(16).toString("hex"),
        queue_name: b.queue_name,
        created_on: now(),
        modified_on: now(),
        consumers: [],
      };
      this.queues.set(record.queue_id, record);
      return { result: this.queueView(record) };
    });
    this.route("GET", `${A}/queues/:id`, "queues.get", ({ params }) => ({
      result: this.queueView(this.queueById(params.id!)),
    }));
    this.route("GET", `${A}/queues/:id/consumers`, "queues.consumers.list", ({ params }) => ({
      result: this.queueById(params.id!).consumers.map((c) => this.consumerView(c, params.id!)),
    }));
    this.route("POST", `${A}/queues/:id/consumers`, "queues.consumers.create", async ({ params, body }) => {
      const queue = this.queueById(params.id!);
      const b = parseBody(S.consumerBody, body);
      this.script(b.script_name);
      if (queue.consumers.some((c) => c.type === "worker")) {
        throw new ApiError(409, 11003, `Queue ${queue.queue_name} already has a consumer`);
      }
      const consumer: ConsumerRecord = {
        consumer_id: randomBytes(16).toString("hex"),
        script: b.script_name,
        type: "worker",
        settings: b.settings ?? {},
        created_on: now(),
        ...(b.dead_letter_queue ? { dead_letter_queue: b.dead_letter_queue } : {}),
      };
      queue.consumers.push(consumer);
      this.runtime.setConsumers(this.consumersByScript());
      return { result: this.consumerView(consumer, queue.queue_id) };
    });
    this.route("PUT", `${A}/queues/:id/consumers/:consumer`, "queues.consumers.update", async ({ params, body }) => {
      const queue = this.queueById(params.id!);
      const b = parseBody(S.consumerBody, body);
      const consumer = queue.consumers.find((c) => c.consumer_id === params.consumer);
      if (!consumer) throw new ApiError(404, 11004, "No such consumer");
      this.script(b.script_name);
      consumer.script = b.script_name;
      consumer.settings = b.settings ?? {};
      if (b.dead_letter_queue) consumer.dead_letter_queue = b.dead_letter_queue;
      else delete consumer.dead_letter_queue;
      this.runtime.setConsumers(this.consumersByScript());
      return { result: this.consumerView(consumer, queue.queue_id) };
    });

    this.defineWorkerRoutes(A);
  }

  private defineWorkerRoutes(A: string) {
    const S_ = `${A}/workers/scripts/:script`;

    // The account's workers.dev subdomain.
    this.route("GET", `${A}/workers/subdomain`, "workers.subdomains.get", () => ({
      result: { subdomain: this.subdomain },
    }));
    this.route("GET", `${A}/workers/subdomains/:name`, "workers.subdomains.check", ({ params }) => {
      if (params.name === this.subdomain) throw new ApiError(409, 10031, "The subdomain is already taken");
      throw new ApiError(404, 10032, "The subdomain is available");
    });

    // Does the Worker exist (wrangler asks before `secret put` and `deploy`).
    this.route("GET", `${A}/workers/services/:script`, "workers.services.get", ({ params }) => {
      const s = this.script(params.script!);
      return {
        result: {
          id: params.script,
          default_environment: {
            environment: "production",
            created_on: s.created_on,
            modified_on: s.modified_on,
            script: {
              id: params.script,
              tags: s.tags,
              ...(s.migration_tag ? { migration_tag: s.migration_tag } : {}),
            },
          },
          created_on: s.created_on,
          modified_on: s.modified_on,
        },
      };
    });
    this.route("GET", `${A}/workers/scripts`, "workers.scripts.list", () => ({
      result: [...this.scripts.entries()].map(([id, s]) => ({
        id,
        created_on: s.created_on,
        modified_on: s.modified_on,
      })),
    }));

    // Upload (creates a version and deploys it to all traffic).
    this.route("PUT", S_, "workers.scripts.update", async ({ params, body, headers, query }) =>
      this.upload(params.script!, body, headers["content-type"] ?? "", true, query.bindings_inherit === "strict"),
    );
    this.route("POST", `${S_}/versions`, "workers.scripts.versions.create", async ({ params, body, headers, query }) =>
      this.upload(params.script!, body, headers["content-type"] ?? "", false, query.bindings_inherit === "strict"),
    );
    this.route("POST", `${S_}/deployments`, "workers.scripts.deployments.create", async ({ params, body }) => {
      const b = parseBody(S.deploymentBody, body);
      const script = this.script(params.script!);
      if (b.versions.reduce((sum, v) => sum + v.percentage, 0) !== 100) {
        throw new ApiError(400, 10209, "The versions' percentages must add up to 100");
      }
      const [serving] = [...b.versions].sort((x, y) => y.percentage - x.percentage);
      const version = script.versions.find((v) => v.id === serving!.version_id);
      if (!version) throw new ApiError(404, 10220, `version ${serving!.version_id} not found`);
      await this.runtime.deploy(version);
      this.recordDeployment(script, version.id, "wrangler", b.annotations?.["workers/message"]);
      const last = script.deployments.at(-1)!;
      return {
        result: {
          id: last.id,
          created_on: last.created_on,
          source: last.source,
          strategy: b.strategy,
          versions: b.versions,
          annotations: b.annotations ?? {},
        },
      };
    });
    this.route("GET", `${S_}/settings`, "workers.scripts.settings.get", ({ params }) => ({
      result: this.settingsView(this.script(params.script!)),
    }));
    this.route("PATCH", `${S_}/settings`, "workers.scripts.settings.edit", async ({ params, body, headers }) =>
      this.patchSettings(params.script!, body, headers["content-type"] ?? ""),
    );

    // Secrets (reference: workers.scripts.secrets.update / list)
    this.route("GET", `${S_}/secrets`, "workers.scripts.secrets.list", ({ params }) => ({
      result: [...this.script(params.script!).secrets.keys()].map((name) => ({ name, type: "secret_text" })),
    }));
    this.route("PUT", `${S_}/secrets`, "workers.scripts.secrets.update", async ({ params, body }) => {
      const b = parseBody(S.secretBody, body);
      const script = this.script(params.script!);
      await this.newVersionWith(
        script,
        (bindings) => [...bindings.filter((x) => x.name !== b.name), { type: "secret_text", name: b.name }],
        new Map([[b.name, b.text]]),
      );
      return { result: { name: b.name, type: "secret_text" } };
    });

    this.route(
      "PATCH",
      `${S_}/secrets-bulk`,
      "workers.scripts.secrets.bulk_update",
      async ({ params, body, headers }) => {
        if (!(headers["content-type"] ?? "").startsWith("application/merge-patch+json")) {
          throw new ApiError(415, 10023, "secrets-bulk takes application/merge-patch+json");
        }
        const b = parseBody(S.secretsBulkBody, body);
        const script = this.script(params.script!);
        const entries = Object.entries(b.secrets ?? {});
        for (const [key, value] of entries) {
          if (value && value.name !== key) throw new ApiError(400, 10026, `secret ${key} is named ${value.name}`);
        }
        const put = new Map(entries.flatMap(([k, v]) => (v ? [[k, v.text] as [string, string]] : [])));
        const deleted = new Set(entries.filter(([, v]) => v === null).map(([k]) => k));
        for (const k of deleted) script.secrets.delete(k);
        await this.newVersionWith(
          script,
          (bindings) => [
            ...bindings.filter((x) => !put.has(x.name) && !deleted.has(x.name)),
            ...[...put.keys()].map((name) => ({ type: "secret_text" as const, name })),
          ],
          put,
        );
        return { result: [...script.secrets.keys()].map((name) => ({ name, type: "secret_text" })) };
      },
    );

    // workers.scripts.settings.edit: script-level settings (wrangler sets the service/environment tags).
    this.route("PATCH", `${S_}/script-settings`, "workers.scripts.settings.edit", ({ params, body }) => {
      const b = parseBody(S.scriptSettingsBody, body);
      const s = this.script(params.script!);
      if (b.tags !== undefined) s.tags = b.tags ?? [];
      return { result: { logpush: false, observability: { enabled: false }, tags: s.tags, tail_consumers: [] } };
    });
    // workers.beta.workers.get: the Worker resource (wrangler reads its workers.dev state there).
    this.route("GET", `${A}/workers/workers/:script`, "workers.beta.workers.get", ({ params }) => {
      const s = this.script(params.script!);
      return {
        result: {
          id: s.id,
          name: s.id,
          created_on: s.created_on,
          updated_on: s.modified_on,
          logpush: false,
          observability: { enabled: false },
          references: { dispatch_namespace_outbounds: [], domains: [], durable_objects: [], queues: [] },
          subdomain: { enabled: s.workers_dev, previews_enabled: s.previews_enabled },
          tags: s.tags,
          tail_consumers: [],
        },
      };
    });

    // Cron Triggers and workers.dev
    this.route("PUT", `${S_}/schedules`, "workers.scripts.schedules.update", ({ params, body }) => {
      const b = parseBody(S.schedulesBody, body);
      const script = this.script(params.script!);
      script.schedules = b.map((s) => ({ cron: s.cron, created_on: now(), modified_on: now() }));
      return { result: { schedules: script.schedules } };
    });
    this.route("GET", `${S_}/schedules`, "workers.scripts.schedules.get", ({ params }) => ({
      result: { schedules: this.script(params.script!).schedules },
    }));
    this.route("GET", `${S_}/subdomain`, "workers.scripts.subdomain.get", ({ params }) => {
      const s = this.script(params.script!);
      return { result: { enabled: s.workers_dev, previews_enabled: s.previews_enabled } };
    });
    this.route("POST", `${S_}/subdomain`, "workers.scripts.subdomain.create", ({ params, body }) => {
      const b = parseBody(S.subdomainBody, body);
      const s = this.script(params.script!);
      s.workers_dev = b.enabled;
      s.previews_enabled = b.previews_enabled ?? b.enabled;
      return { result: { enabled: s.workers_dev, previews_enabled: s.previews_enabled } };
    });

    // Deployments and versions
    this.route("GET", `${S_}/deployments`, "workers.scripts.deployments.list", ({ params }) => {
      const s = this.script(params.script!);
      return {
        result: {
          deployments: [...s.deployments].reverse().map((d) => ({
            id: d.id,
            created_on: d.created_on,
            source: d.source,
            strategy: "percentage",
            author_email: "standin@example.com",
            annotations: d.message ? { "workers/message": d.message } : {},
            versions: [{ version_id: d.version_id, percentage: 100 }],
          })),
        },
      };
    });
    this.route("GET", `${S_}/versions/:version`, "workers.scripts.versions.get", ({ params }) => {
      const s = this.script(params.script!);
      const v = s.versions.find((x) => x.id === params.version);
      if (!v) throw new ApiError(404, 10220, "version not found");
      return { result: this.versionView(v) };
    });
    this.route("GET", `${S_}/versions`, "workers.scripts.versions.list", ({ params }) => {
      const s = this.script(params.script!);
      return { result: { items: [...s.versions].reverse().map((v) => this.versionView(v)) } };
    });

    // Static assets: an upload session (manifest → buckets of hashes to send), the upload, the completion token.
    this.route("POST", `${S_}/assets-upload-session`, "workers.scripts.assets.upload_session", ({ params, body }) => {
      const b = parseBody(S.assetsSessionBody, body);
      const missing = new Set(
        Object.values(b.manifest)
          .map((f) => f.hash)
          .filter((h) => !this.assetContents.has(h)),
      );
      const jwt = `upload.${randomBytes(12).toString("hex")}`;
      this.assetSessions.set(jwt, { script: params.script!, manifest: b.manifest, missing });
      if (missing.size === 0) {
        const completion = `complete.${randomBytes(12).toString("hex")}`;
        this.completions.set(completion, b.manifest);
        return { result: { jwt: completion, buckets: [] } };
      }
      return { result: { jwt, buckets: [[...missing]] } };
    });
    this.route("POST", `${A}/workers/assets/upload`, "workers.assets.upload", async ({ query, body, headers }) => {
      const token = /^Bearer (.+)$/.exec(headers.authorization ?? "")?.[1] ?? "";
      const session = this.assetSessions.get(token);
      if (!session) throw new ApiError(401, 10000, "Authentication error: not an upload session's token");
      const form = await new Request("http://x", {
        method: "POST",
        headers: { "content-type": headers["content-type"] ?? "" },
        body,
      }).formData();
      for (const [hash, value] of form.entries()) {
        if (!session.missing.has(hash)) throw new ApiError(400, 10026, `asset ${hash} was not asked for`);
        const text = typeof value === "string" ? value : await value.text();
        this.assetContents.set(hash, query.base64 === "true" ? Buffer.from(text, "base64") : Buffer.from(text));
        session.missing.delete(hash);
      }
      if (session.missing.size > 0) return { status: 202, result: { jwt: null } };
      const completion = `complete.${randomBytes(12).toString("hex")}`;
      this.completions.set(completion, session.manifest);
      this.assetSessions.delete(token);
      return { status: 201, result: { jwt: completion } };
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Workers: uploads, versions, settings

  /**
   * An upload: `PUT …/scripts/{name}` (workers.scripts.update) creates a version and deploys it;
   * `POST …/scripts/{name}/versions` (workers.scripts.versions.create) only creates it.
   */
  private async upload(
    name: string,
    body: Buffer,
    contentType: string,
    deploy: boolean,
    strict: boolean,
  ): Promise<Reply> {
    if (!/^[a-z0-9]([a-z0-9_-]{0,61}[a-z0-9])?$/.test(name)) {
      throw new ApiError(
        400,
        10016,
        "Invalid Worker name: lowercase letters, digits, dashes and underscores, at most 63",
      );
    }
    if (!contentType.startsWith("multipart/form-data")) {
      throw new ApiError(415, 10023, "Uploads are multipart/form-data with a metadata part");
    }
    const form = await new Request("http://x", {
      method: "PUT",
      headers: { "content-type": contentType },
      body,
    }).formData();
    const metadataPart = form.get("metadata");
    if (metadataPart === null) throw new ApiError(400, 10021, "A metadata part is required");
    const metadata = parseWith(
      S.workerMetadata,
      JSON.parse(typeof metadataPart === "string" ? metadataPart : await metadataPart.text()),
    );
    const modules = new Map<string, { contents: Buffer; type: string }>();
    for (const [key, value] of form.entries()) {
      if (key === "metadata" || typeof value === "string") continue;
      modules.set(key, { contents: Buffer.from(await value.arrayBuffer()), type: value.type });
    }
    const main = modules.get(metadata.main_module);
    if (!main) throw new ApiError(400, 10021, `main_module ${metadata.main_module} is not a part of the upload`);
    if (main.type !== "application/javascript+module") {
      throw new ApiError(400, 10021, `main_module must be application/javascript+module, got ${main.type}`);
    }
    if (!deploy && metadata.migrations) {
      throw new ApiError(
        400,
        10211,
        "Durable Object migrations are applied by a deploy (PUT), not by a version upload",
      );
    }
    const existing = this.scripts.get(name);
    if (!deploy && !existing) throw new ApiError(404, 10007, "This Worker does not exist on your account.");
    const script: ScriptRecord = existing ?? {
      id: name,
      created_on: now(),
      modified_on: now(),
      secrets: new Map(),
      versions: [],
      deployments: [],
      durable_classes: new Set(),
      schedules: [],
      workers_dev: false,
      previews_enabled: false,
      tags: [],
    };
    const previous = script.versions.find((v) => v.id === script.deployed);
    // Bindings kept from the deployed version: by type (keep_bindings) or by name (inherit).
    const keep = new Set(metadata.keep_bindings ?? []);
    const sent = metadata.bindings ?? [];
    const bindings: DeployedVersion["bindings"] = [
      ...(previous?.bindings ?? []).filter((b) => keep.has(b.type) && !sent.some((x) => x.name === b.name)),
    ];
    for (const b of sent) {
      if (b.type !== "inherit") {
        bindings.push(b.type === "secret_text" ? { type: "secret_text", name: b.name } : b);
        if (b.type === "secret_text") script.secrets.set(b.name, b.text);
        continue;
      }
      const inherited = previous?.bindings.find((x) => x.name === b.name);
      if (inherited) bindings.push(inherited);
      else if (strict)
        throw new ApiError(400, 10021, `binding ${b.name} cannot be inherited: the deployed version has none`);
    }
    const migrationState = { tag: script.migration_tag, classes: new Set(script.durable_classes) };
    this.applyMigrations(migrationState, metadata.migrations);
    for (const b of bindings) this.checkBinding(migrationState.classes, b);

    let assets: S.AssetManifest | undefined;
    if (metadata.assets?.jwt) {
      assets = this.completions.get(metadata.assets.jwt);
      if (!assets) throw new ApiError(400, 10021, "assets.jwt is not a completion token of an upload session");
    } else if (metadata.keep_assets) {
      assets = previous?.assets;
    }
    const version: DeployedVersion = {
      id: randomUUID(),
      number: script.versions.length + 1,
      created_on: now(),
      script: name,
      metadata,
      modules,
      bindings,
      assets,
      assetContents: this.assetContents,
      secrets: script.secrets,
    };
    if (deploy) await this.runtime.deploy(version);
    script.migration_tag = migrationState.tag;
    script.durable_classes = migrationState.classes;
    this.scripts.set(name, script);
    script.versions.push(version);
    script.modified_on = now();
    if (deploy) this.recordDeployment(script, version.id, "wrangler", metadata.annotations?.["workers/message"]);
    if (!deploy) return { result: this.versionView(version) };
    return {
      result: {
        id: name,
        etag: version.id,
        created_on: script.created_on,
        modified_on: script.modified_on,
        has_modules: true,
        startup_time_ms: 1,
        usage_model: "standard",
        compatibility_date: metadata.compatibility_date,
        ...(script.migration_tag ? { migration_tag: script.migration_tag } : {}),
        handlers: ["fetch", "queue", "scheduled"],
      },
    };
  }

  private recordDeployment(script: ScriptRecord, versionId: string, source: string, message?: string) {
    script.deployed = versionId;
    script.deployments.push({
      id: randomUUID(),
      created_on: now(),
      version_id: versionId,
      source,
      ...(message ? { message } : {}),
    });
  }

  /** Durable Object migrations: the tag must follow the script's, and a class is created once. */
  private applyMigrations(
    state: { tag?: string | undefined; classes: Set<string> },
    migrations: S.WorkerMetadata["migrations"],
  ) {
    if (!migrations) return;
    if ((migrations.old_tag ?? undefined) !== state.tag) {
      throw new ApiError(
        400,
        10079,
        `migration old_tag ${migrations.old_tag ?? "(none)"} does not match the script's current tag ${state.tag ?? "(none)"}`,
      );
    }
    const steps: S.MigrationStep[] = "steps" in migrations ? migrations.steps : [migrations];
    for (const step of steps) {
      for (const c of [...(step.new_classes ?? []), ...(step.new_sqlite_classes ?? [])]) {
        if (state.classes.has(c)) throw new ApiError(400, 10074, `Cannot create class ${c}: it already exists`);
        state.classes.add(c);
      }
      for (const c of step.deleted_classes ?? []) state.classes.delete(c);
      for (const r of step.renamed_classes ?? []) {
        state.classes.delete(r.from);
        state.classes.add(r.to);
      }
    }
    if (migrations.new_tag) state.tag = migrations.new_tag;
  }

  /** A binding must name what exists on the account, as the upload API checks. */
  private checkBinding(durableClasses: Set<string>, b: DeployedVersion["bindings"][number]) {
    switch (b.type) {
      case "d1":
        if (!this.databases.has(b.id))
          throw new ApiError(400, 10021, `D1 binding ${b.name}: database ${b.id} not found`);
        return;
      case "r2_bucket":
        if (!this.buckets.has(b.bucket_name)) {
          throw new ApiError(400, 10085, `R2 binding ${b.name}: bucket ${b.bucket_name} not found`);
        }
        return;
      case "queue":
        if (![...this.queues.values()].some((q) => q.queue_name === b.queue_name)) {
          throw new ApiError(400, 11000, `Queue binding ${b.name}: queue ${b.queue_name} not found`);
        }
        return;
      case "durable_object_namespace":
        if (!b.script_name && !durableClasses.has(b.class_name)) {
          throw new ApiError(
            400,
            10061,
            `Durable Object binding ${b.name}: class ${b.class_name} has no migration that creates it`,
          );
        }
        return;
      default:
        return;
    }
  }

  /** `wrangler secret put` and `secret bulk`: a new version of the deployed one with the secret's binding. */
  private async newVersionWith(
    script: ScriptRecord,
    edit: (bindings: DeployedVersion["bindings"]) => DeployedVersion["bindings"],
    secrets: Map<string, string>,
  ) {
    const previous = script.versions.find((v) => v.id === script.deployed);
    if (!previous) throw new ApiError(404, 10007, "This Worker has no deployed version");
    for (const [k, v] of secrets) script.secrets.set(k, v);
    const version: DeployedVersion = {
      ...previous,
      id: randomUUID(),
      number: script.versions.length + 1,
      created_on: now(),
      bindings: edit(previous.bindings),
    };
    await this.runtime.deploy(version);
    script.versions.push(version);
    this.recordDeployment(script, version.id, "api");
  }

  private async patchSettings(name: string, body: Buffer, contentType: string): Promise<Reply> {
    const script = this.script(name);
    const form = await new Request("http://x", {
      method: "PATCH",
      headers: { "content-type": contentType },
      body,
    }).formData();
    const settingsPart = form.get("settings");
    if (settingsPart === null) throw new ApiError(400, 10021, "A settings part is required");
    const settings = parseWith(
      S.settingsPatch,
      JSON.parse(typeof settingsPart === "string" ? settingsPart : await settingsPart.text()),
    );
    if (settings.bindings) {
      const secrets = new Map<string, string>();
      const sent = settings.bindings;
      for (const b of sent) if (b.type === "secret_text") secrets.set(b.name, b.text);
      await this.newVersionWith(
        script,
        (bindings) => [
          ...bindings.filter((x) => !sent.some((s) => s.name === x.name)),
          ...sent.map((b) => (b.type === "secret_text" ? { type: "secret_text" as const, name: b.name } : b)),
        ],
        secrets,
      );
    }
    return { result: this.settingsView(script) };
  }

  // ---------------------------------------------------------------------------------------------
  // Views

  private d1View(d: D1Record) {
    return {
      uuid: d.uuid,
      name: d.name,
      version: "production",
      created_at: d.created_at,
      num_tables: 0,
      file_size: 0,
      ...(d.jurisdiction ? { jurisdiction: d.jurisdiction } : {}),
    };
  }

  private queueView(q: QueueRecord) {
    const producers = [...this.scripts.entries()]
      .filter(([, s]) =>
        s.versions
          .find((v) => v.id === s.deployed)
          ?.bindings.some((b) => b.type === "queue" && b.queue_name === q.queue_name),
      )
      .map(([id]) => ({ type: "worker", script: id }));
    return {
      queue_id: q.queue_id,
      queue_name: q.queue_name,
      created_on: q.created_on,
      modified_on: q.modified_on,
      producers,
      producers_total_count: producers.length,
      consumers: q.consumers.map((c) => this.consumerView(c, q.queue_id)),
      consumers_total_count: q.consumers.length,
      settings: { delivery_delay: 0, delivery_paused: false, message_retention_period: 345600 },
    };
  }

  private consumerView(c: ConsumerRecord, queueId: string) {
    return {
      consumer_id: c.consumer_id,
      queue_id: queueId,
      script: c.script,
      type: c.type,
      created_on: c.created_on,
      settings: c.settings,
      ...(c.dead_letter_queue ? { dead_letter_queue: c.dead_letter_queue } : {}),
    };
  }

  private settingsView(s: ScriptRecord) {
    const v = s.versions.find((x) => x.id === s.deployed);
    return {
      bindings: (v?.bindings ?? []).map((b) => (b.type === "secret_text" ? { type: b.type, name: b.name } : b)),
      compatibility_date: v?.metadata.compatibility_date,
      compatibility_flags: v?.metadata.compatibility_flags ?? [],
      placement: {},
      tags: [],
      tail_consumers: [],
      logpush: false,
      observability: { enabled: false },
      usage_model: "standard",
      ...(s.migration_tag ? { migration_tag: s.migration_tag } : {}),
    };
  }

  private versionView(v: DeployedVersion) {
    return {
      id: v.id,
      number: v.number,
      metadata: {
        created_on: v.created_on,
        modified_on: v.created_on,
        source: "wrangler",
        author_email: "standin@example.com",
        has_preview: false,
      },
      annotations: v.metadata.annotations ?? {},
      resources: {
        bindings: v.bindings.map((b) => (b.type === "secret_text" ? { type: b.type, name: b.name } : b)),
        script: { etag: v.id, handlers: ["fetch", "queue", "scheduled"] },
        script_runtime: {
          compatibility_date: v.metadata.compatibility_date,
          compatibility_flags: v.metadata.compatibility_flags ?? [],
          usage_model: "standard",
        },
      },
    };
  }

  private consumersByScript() {
    const out = new Map<
      string,
      Array<{ queue: string; dead_letter_queue?: string; settings: Record<string, number | null | undefined> }>
    >();
    for (const q of this.queues.values()) {
      for (const c of q.consumers) {
        const list = out.get(c.script) ?? [];
        list.push({
          queue: q.queue_name,
          settings: c.settings,
          ...(c.dead_letter_queue ? { dead_letter_queue: c.dead_letter_queue } : {}),
        });
        out.set(c.script, list);
      }
    }
    return out;
  }

  // ---------------------------------------------------------------------------------------------
  // The workers.dev gateway

  private async serveWorker(req: IncomingMessage, res: ServerResponse) {
    const host = (req.headers.host ?? "").replace(/:\d+$/, "");
    const suffix = `.${this.subdomain}.workers.dev`;
    const name = host.endsWith(suffix) ? host.slice(0, -suffix.length) : undefined;
    const script = name ? this.scripts.get(name) : undefined;
    if (!name || !script?.workers_dev || !script.deployed) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`There is nothing here yet (no Worker on ${host})`);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const response = await this.runtime.fetch(name, `https://${host}${req.url ?? "/"}`, {
      method: req.method ?? "GET",
      headers: Object.entries(req.headers).flatMap(([k, v]) =>
        v === undefined
          ? []
          : Array.isArray(v)
            ? v.map((x) => [k, x] as [string, string])
            : [[k, v] as [string, string]],
      ),
      body: chunks.length > 0 ? Buffer.concat(chunks) : undefined,
    });
    res.writeHead(response.status, Object.fromEntries(response.headers));
    res.end(Buffer.from(await response.arrayBuffer()));
  }
}

/** The v4 page pagination of list operations (page, per_page, result_info). */
function paged<T>(all: T[], page = 1, perPage = 20): Reply {
  const start = (page - 1) * perPage;
  const items = all.slice(start, start + perPage);
  return {
    result: items,
    result_info: {
      page,
      per_page: perPage,
      count: items.length,
      total_count: all.length,
      total_pages: Math.ceil(all.length / perPage),
    },
  };
}
