/**
 * The stand-in's runtime: one Miniflare (workerd) holding every D1 database and R2 bucket the API
 * created, and every Worker it was given, each as its last deployed version: the modules that were
 * uploaded, with the bindings of the upload's metadata mapped to those same databases, buckets
 * and queues, its secrets, and its static assets. So the SQL `wrangler d1 migrations apply
 * --remote` sends lands in the database the deployed Worker reads, and a request to the Worker's
 * workers.dev address runs the bundle `wrangler deploy` uploaded, not a rebuild of the source.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { AssetManifest, Binding, WorkerMetadata } from "./schemas";

/**
 * The Miniflare wrangler itself runs (its own, newer than the top-level one), fed the worker options
 * of the form wrangler's dev server builds, converted as it converts them.
 */
const fromWrangler = createRequire(createRequire(import.meta.url).resolve("wrangler/package.json"));
const { Miniflare, convertV4MiniflareOptions } = fromWrangler("miniflare") as {
  Miniflare: new (options: unknown) => MiniflareInstance;
  convertV4MiniflareOptions: (options: { workers: WorkerOptions[]; defaultPersistRoot: string }) => unknown;
};
interface MiniflareInstance {
  ready: Promise<URL>;
  setOptions(options: unknown): Promise<void>;
  getD1Database(binding: string, worker: string): Promise<D1Database>;
  getWorker(worker: string): Promise<{ fetch(url: string, init: RequestInit): Promise<Response> }>;
  dispose(): Promise<void>;
}
type WorkerOptions = Record<string, unknown> & { name: string };
/** wrangler's own splitter of SQL files into statements (triggers' BEGIN … END included). */
const { unstable_splitSqlQuery: splitSqlQuery } = fromWrangler("wrangler") as {
  unstable_splitSqlQuery: (sql: string) => string[];
};

/** A version of a Worker as uploaded: what the runtime needs to serve it. */
export interface DeployedVersion {
  id: string;
  number: number;
  created_on: string;
  script: string;
  metadata: WorkerMetadata;
  modules: Map<string, { contents: Buffer; type: string }>;
  /** The version's bindings; secrets appear by name (`secret_text`), their values in `secrets`. */
  bindings: Array<Binding | { type: "secret_text"; name: string }>;
  assets: AssetManifest | undefined;
  assetContents: Map<string, Buffer>;
  secrets: Map<string, string>;
}

interface QueueConsumer {
  queue: string;
  dead_letter_queue?: string;
  settings: Record<string, number | null | undefined>;
}

const HOST = "standin-host";

export class WorkersRuntime {
  private mf?: MiniflareInstance;
  private readonly databases: string[] = [];
  private readonly bucketNames: string[] = [];
  private readonly deployed = new Map<string, DeployedVersion>();
  private consumers = new Map<string, QueueConsumer[]>();
  /** Resources were added since workerd last started: restart it before it is next used. */
  private stale = true;

  constructor(private readonly stateDir: string) {}

  addDatabase(uuid: string) {
    this.databases.push(uuid);
    this.stale = true;
  }

  addBucket(name: string) {
    this.bucketNames.push(name);
    this.stale = true;
  }

  async deploy(version: DeployedVersion) {
    const before = this.deployed.get(version.script);
    this.deployed.set(version.script, version);
    try {
      await this.reload();
    } catch (err) {
      // A version workerd cannot start is refused, as Cloudflare refuses an upload whose startup fails.
      if (before) this.deployed.set(version.script, before);
      else this.deployed.delete(version.script);
      await this.reload();
      throw err;
    }
  }

  setConsumers(consumers: Map<string, QueueConsumer[]>) {
    this.consumers = consumers;
    this.stale = true;
  }

  /**
   * Runs SQL the D1 query API received: one statement with its parameters, or several without, as
   * one batch (D1 runs a request's statements as a transaction: a failing one rolls back the rest).
   */
  async query(uuid: string, sql: string, params: unknown[], raw: boolean) {
    const db = await (await this.started()).getD1Database(`D1_${this.databases.indexOf(uuid)}`, HOST);
    const statements = params.length === 0 ? splitSqlQuery(sql) : [sql];
    const prepared = statements.map((s) => db.prepare(s).bind(...params));
    if (raw) {
      const rows = (await prepared[0]!.raw({ columnNames: true })) as unknown[][];
      const [columns = [], ...data] = rows;
      return [{ results: { columns, rows: data }, success: true, meta: {} }];
    }
    const results = prepared.length === 1 ? [await prepared[0]!.all()] : await db.batch(prepared);
    return results.map((r) => ({ results: r.results, success: r.success, meta: r.meta }));
  }

  /** A request to a deployed Worker, as its workers.dev address would receive it. */
  async fetch(script: string, url: string, init: { method: string; headers: Array<[string, string]>; body?: Buffer }) {
    const worker = await (await this.started()).getWorker(script);
    return worker.fetch(url, {
      method: init.method,
      headers: init.headers.filter(([k]) => k.toLowerCase() !== "host"),
      body: init.body,
    });
  }

  async dispose() {
    await this.mf?.dispose();
  }

  private async started(): Promise<MiniflareInstance> {
    if (this.stale || !this.mf) await this.reload();
    return this.mf!;
  }

  private async reload() {
    this.stale = false;
    const workers: WorkerOptions[] = [
      {
        name: HOST,
        modules: true,
        script: "export default { fetch() { return new Response('stand-in host'); } }",
        compatibilityDate: "2026-08-01",
        d1Databases: Object.fromEntries(this.databases.map((uuid, i) => [`D1_${i}`, uuid])),
        r2Buckets: Object.fromEntries(this.bucketNames.map((name, i) => [`R2_${i}`, name])),
      },
      ...[...this.deployed.values()].map((v) => this.workerOptions(v)),
    ];
    const options = convertV4MiniflareOptions({ workers, defaultPersistRoot: join(this.stateDir, "persist") });
    if (this.mf) await this.mf.setOptions(options);
    else {
      this.mf = new Miniflare(options);
      await this.mf.ready;
    }
  }

  private workerOptions(v: DeployedVersion): WorkerOptions {
    const dir = join(this.stateDir, "versions", v.id);
    const modules = [...v.modules.entries()]
      .filter(([, m]) => m.type === "application/javascript+module")
      .map(([name, m]) => {
        const path = join(dir, name);
        mkdirSync(dirname(path), { recursive: true });
        writeFileSync(path, m.contents);
        return { type: "ESModule" as const, path };
      });
    const vars: Record<string, string> = {};
    const d1: Record<string, string> = {};
    const r2: Record<string, string> = {};
    const durableObjects: Record<string, { className: string; useSQLite: boolean }> = {};
    const producers: Record<string, { queueName: string }> = {};
    const ratelimits: Record<string, { namespace_id: string; simple: { limit: number; period: 10 | 60 } }> = {};
    let assetsBinding: string | undefined;
    for (const b of v.bindings) {
      switch (b.type) {
        case "plain_text":
          vars[b.name] = b.text;
          break;
        case "secret_text":
          vars[b.name] = v.secrets.get(b.name) ?? "";
          break;
        case "d1":
          d1[b.name] = b.id;
          break;
        case "r2_bucket":
          r2[b.name] = b.bucket_name;
          break;
        case "durable_object_namespace":
          durableObjects[b.name] = { className: b.class_name, useSQLite: true };
          break;
        case "queue":
          producers[b.name] = { queueName: b.queue_name };
          break;
        case "ratelimit":
          ratelimits[b.name] = {
            namespace_id: b.namespace_id,
            simple: { limit: b.simple.limit, period: b.simple.period },
          };
          break;
        case "assets":
          assetsBinding = b.name;
          break;
      }
    }
    const options: WorkerOptions & { assets?: unknown } = {
      name: v.script,
      modules,
      modulesRoot: dir,
      // An upload without a date (wrangler's draft Worker for secrets) runs at Cloudflare's oldest.
      compatibilityDate: v.metadata.compatibility_date ?? "2021-11-03",
      compatibilityFlags: v.metadata.compatibility_flags ?? [],
      bindings: vars,
      d1Databases: d1,
      r2Buckets: r2,
      durableObjects,
      queueProducers: producers,
      queueConsumers: Object.fromEntries(
        (this.consumers.get(v.script) ?? []).map((c) => [
          c.queue,
          {
            ...(typeof c.settings.batch_size === "number" ? { maxBatchSize: c.settings.batch_size } : {}),
            ...(typeof c.settings.max_wait_time_ms === "number"
              ? { maxBatchTimeout: c.settings.max_wait_time_ms / 1000 }
              : {}),
            ...(typeof c.settings.max_retries === "number" ? { maxRetries: c.settings.max_retries } : {}),
            ...(c.dead_letter_queue ? { deadLetterQueue: c.dead_letter_queue } : {}),
          },
        ]),
      ),
      ratelimits,
    };
    if (v.assets) {
      const assetsDir = join(this.stateDir, "assets", v.id);
      for (const [path, file] of Object.entries(v.assets)) {
        const target = join(assetsDir, path);
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, v.assetContents.get(file.hash) ?? Buffer.alloc(0));
      }
      options.assets = { directory: assetsDir, ...(assetsBinding ? { binding: assetsBinding } : {}) };
    }
    return options;
  }
}
