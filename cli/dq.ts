/**
 * `dq`: the service from a terminal or a pipeline step. Configured by DQ_URL, DQ_API_KEY and
 * DQ_TENANT (or --url, --api-key, --tenant); the key is exchanged for a token once per run.
 *
 * Exit status: 0 success; 1 the job failed, or `--fail-on` tripped (the scan raised an alert of that
 * priority or above: it opened or escalated an incident); 2 a usage error; 3 an API or network error
 * (the problem's detail and the request id on stderr).
 *
 * Built by `npm install` (scripts/build-cli.mjs) into dist/dq.mjs, the package's `bin`.
 */
import { createReadStream, statSync } from "node:fs";
import { extname } from "node:path";
import { Readable } from "node:stream";
import { SingleBar } from "cli-progress";
import { Command, CommanderError, Option } from "commander";
import { createDqClient, type DqClient } from "../clients/ts";

const LEVELS = ["LOW", "MEDIUM", "HIGH"] as const;
type Level = (typeof LEVELS)[number];

/** An error of the API or the network: exit status 3. */
class ApiFailure extends Error {
  constructor(
    message: string,
    readonly requestId?: string,
  ) {
    super(message);
  }
}

/** A usage error found after parsing (a missing setting): exit status 2. */
class UsageError extends Error {}

interface Globals {
  url?: string;
  apiKey?: string;
  tenant?: string;
  json?: boolean;
}

interface Session {
  client: DqClient;
  base: string;
  tenant: string;
  token: string;
  json: boolean;
}

const CONTENT_TYPES: Record<string, string> = {
  ".csv": "text/csv",
  ".ndjson": "application/x-ndjson",
  ".jsonl": "application/x-ndjson",
  ".json": "application/json",
  ".parquet": "application/vnd.apache.parquet",
};

/** The problem of a failed answer, as one line for stderr. */
async function failure(res: Response, what: string): Promise<ApiFailure> {
  const text = await res.text().catch(() => "");
  let detail = text.slice(0, 500);
  try {
    const problem = JSON.parse(text) as { detail?: string; title?: string };
    detail = problem.detail ?? problem.title ?? detail;
  } catch {
    // not JSON: the text itself
  }
  const requestId = res.headers.get("x-request-id") ?? undefined;
  return new ApiFailure(`${what}: HTTP ${res.status}: ${detail}`, requestId);
}

async function connect(globals: Globals): Promise<Session> {
  const base = (globals.url ?? process.env.DQ_URL ?? "").replace(/\/+$/, "");
  const key = globals.apiKey ?? process.env.DQ_API_KEY ?? "";
  const tenant = globals.tenant ?? process.env.DQ_TENANT ?? "";
  const missing = [!base && "DQ_URL (--url)", !key && "DQ_API_KEY (--api-key)", !tenant && "DQ_TENANT (--tenant)"];
  const named = missing.filter(Boolean);
  if (named.length > 0) throw new UsageError(`missing ${named.join(", ")}`);
  let res: Response;
  try {
    res = await fetch(`${base}/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ api_key: key }),
    });
  } catch (err) {
    throw new ApiFailure(`cannot reach ${base}: ${(err as Error).message}`);
  }
  if (!res.ok) throw await failure(res, "sign-in");
  const { access_token: token } = (await res.json()) as { access_token: string };
  return { client: createDqClient({ baseUrl: base, token }), base, tenant, token, json: globals.json === true };
}

/** The data of a typed client call, or an ApiFailure with the problem's detail. */
async function ok<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>, what: string): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch (err) {
    throw new ApiFailure(`${what}: ${(err as Error).message}`);
  }
  if (result.error !== undefined || !result.response.ok) {
    const problem = (result.error ?? {}) as { detail?: string; title?: string };
    throw new ApiFailure(
      `${what}: HTTP ${result.response.status}: ${problem.detail ?? problem.title ?? "request failed"}`,
      result.response.headers.get("x-request-id") ?? undefined,
    );
  }
  return result.data as T;
}

/** Prints rows as a table (or, with --json, the whole value as one JSON document). */
function print(session: Pick<Session, "json">, value: unknown, rows: Array<Record<string, unknown>>): void {
  if (session.json) {
    process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
    return;
  }
  if (rows.length === 0) {
    process.stdout.write("(none)\n");
    return;
  }
  const columns = Object.keys(rows[0]!);
  const cell = (v: unknown) => (v === null || v === undefined ? "" : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join("  ")
      .trimEnd();
  process.stdout.write(`${line(columns)}\n${line(widths.map((w) => "-".repeat(w)))}\n`);
  for (const r of rows) process.stdout.write(`${line(columns.map((c) => cell(r[c])))}\n`);
}

interface ScanJob {
  job_id: string;
  status: "QUEUED" | "RUNNING" | "SUCCEEDED" | "FAILED" | "CANCELLED";
  progress: { rows: number; bytes: number; fraction: number | null };
  error: string | null;
}

interface Alert {
  id: number;
  type: string;
  attribute: string | null;
  priority: string;
  description: string;
}

/** Polls the job until it ends: a progress bar on a terminal, plain lines otherwise. */
async function waitFor(session: Session, assetId: number, jobId: string): Promise<ScanJob> {
  const tty = process.stderr.isTTY === true && !session.json;
  const bar = tty
    ? new SingleBar({ format: "scan {bar} {percentage}% | {rows} rows | {status}", stream: process.stderr })
    : undefined;
  bar?.start(100, 0, { rows: 0, status: "QUEUED" });
  let last = "";
  for (;;) {
    const job = await ok<ScanJob>(
      session.client.GET("/api/backend/{tenant}/configuration/assets/{assetId}/scans/{job_id}", {
        params: { path: { tenant: session.tenant, assetId, job_id: jobId } },
      }),
      "scan status",
    );
    const pct = Math.round((job.progress.fraction ?? 0) * 100);
    if (bar) bar.update(pct, { rows: job.progress.rows, status: job.status });
    else if (!session.json) {
      const line = `${job.status} ${job.progress.rows} rows${job.progress.fraction === null ? "" : ` ${pct}%`}`;
      if (line !== last) process.stderr.write(`${line}\n`);
      last = line;
    }
    if (job.status === "SUCCEEDED" || job.status === "FAILED" || job.status === "CANCELLED") {
      if (bar) {
        bar.update(job.status === "SUCCEEDED" ? 100 : pct, { status: job.status });
        bar.stop();
      }
      return job;
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/** Waits for the job, prints its alerts, and returns the exit status (--fail-on, a failed job). */
async function finish(session: Session, assetId: number, jobId: string, failOn: Level | undefined): Promise<number> {
  const job = await waitFor(session, assetId, jobId);
  const alerts =
    job.status === "SUCCEEDED"
      ? await ok<Alert[]>(
          session.client.POST("/api/backend/{tenant}/configuration/sources/{sourceID}/alerts", {
            params: { path: { tenant: session.tenant, sourceID: assetId }, query: { job_id: jobId } },
          }),
          "alerts",
        )
      : [];
  const threshold = failOn ? LEVELS.indexOf(failOn) : Number.POSITIVE_INFINITY;
  const tripped = alerts.filter((a) => LEVELS.indexOf(a.priority as Level) >= threshold);
  print(
    session,
    { job, alerts, fail_on: failOn ?? null, tripped: tripped.length > 0 },
    alerts.map((a) => ({ priority: a.priority, policy: a.type, attribute: a.attribute ?? "", alert: a.description })),
  );
  if (!session.json) {
    const summary =
      job.status !== "SUCCEEDED"
        ? `job ${jobId} ${job.status}: ${job.error ?? "no reason given"}`
        : `job ${jobId} SUCCEEDED: ${alerts.length} alert(s)${tripped.length > 0 ? `, ${tripped.length} at ${failOn} or above` : ""}`;
    process.stderr.write(`${summary}\n`);
  }
  return job.status !== "SUCCEEDED" || tripped.length > 0 ? 1 : 0;
}

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new CommanderError(2, "dq.usage", `${name} must be a positive integer`);
    return n;
  };
}

const failOnOption = () =>
  new Option("--fail-on <level>", "exit 1 when the scan raised an alert of this priority or above").choices(LEVELS);

export function program(run: (code: number) => void): Command {
  const root = new Command("dq")
    .description("Data quality monitoring from the command line")
    .option("--url <url>", "the service's URL (default: $DQ_URL)")
    .option("--api-key <key>", "an API key (default: $DQ_API_KEY)")
    .option("--tenant <id>", "the tenant (default: $DQ_TENANT)")
    .option("--json", "print one JSON document on stdout, nothing else")
    .exitOverride()
    .showHelpAfterError();
  const session = () => connect(root.opts<Globals>());

  const projects = root.command("projects").description("projects");
  projects
    .command("list")
    .description("list the projects")
    .action(async () => {
      const s = await session();
      const list = await ok(
        s.client.GET("/api/backend/{tenant}/configuration/projects", { params: { path: { tenant: s.tenant } } }),
        "projects",
      );
      print(
        s,
        list,
        list.map((p) => ({ id: p.id, name: p.name, description: p.description ?? "" })),
      );
      run(0);
    });

  const assets = root.command("assets").description("assets");
  assets
    .command("list")
    .description("list a project's assets")
    .requiredOption("--project <id>", "the project", positiveInt("--project"))
    .action(async (opts: { project: number }) => {
      const s = await session();
      const list = await ok(
        s.client.GET("/api/backend/{tenant}/configuration/projects/{projectId}/assets", {
          params: { path: { tenant: s.tenant, projectId: opts.project } },
        }),
        "assets",
      );
      print(
        s,
        list,
        list.map((a) => ({ id: a.id, name: a.name, type: a.type })),
      );
      run(0);
    });

  const incidents = root.command("incidents").description("incidents");
  incidents
    .command("list")
    .description("list incidents, newest first")
    .option("--open", "only open incidents")
    .addOption(new Option("--severity <level>", "only this severity").choices(LEVELS))
    .action(async (opts: { open?: boolean; severity?: Level }) => {
      const s = await session();
      const all = await ok(
        s.client.GET("/api/backend/{tenant}/incidents", {
          params: { path: { tenant: s.tenant }, query: opts.severity ? { severities: opts.severity } : {} },
        }),
        "incidents",
      );
      const list = opts.open ? all.filter((i) => i.state === "OPEN") : all;
      print(
        s,
        list,
        list.map((i) => ({
          id: i.id,
          state: i.state,
          severity: i.severity,
          asset: i.source_name,
          policy: i.policy_name,
          attribute: i.attribute ?? "",
          opened_at: i.opened_at,
        })),
      );
      run(0);
    });
  incidents
    .command("close")
    .description("close an incident")
    .argument("<id>", "the incident", positiveInt("id"))
    .requiredOption("--reason <reason>", "FIXED, EXPECTED, FALSE_POSITIVE or NO_ACTION_NEEDED")
    .option("--note <text>", "a note for the incident's history")
    .action(async (id: number, opts: { reason: string; note?: string }) => {
      const reasons = ["FIXED", "EXPECTED", "FALSE_POSITIVE", "NO_ACTION_NEEDED"] as const;
      const reason = opts.reason.toUpperCase() as (typeof reasons)[number];
      if (!reasons.includes(reason)) throw new UsageError(`--reason must be one of ${reasons.join(", ")}`);
      const s = await session();
      const closed = await ok(
        s.client.PATCH("/api/backend/{tenant}/incidents/{incidentId}", {
          params: { path: { tenant: s.tenant, incidentId: id } },
          body: { state: "CLOSED", reason, ...(opts.note ? { note: opts.note } : {}) },
        }),
        "close incident",
      );
      print(s, closed, [{ id: closed.id, state: closed.state, close_reason: closed.close_reason ?? "" }]);
      run(0);
    });

  root
    .command("upload")
    .description("upload a batch (CSV, NDJSON, JSON or Parquet, by extension) to an asset; streamed, never read whole")
    .argument("<asset_id>", "the asset", positiveInt("asset_id"))
    .argument("<file>", "the file")
    .option("--wait", "wait for the scan and print its alerts")
    .addOption(failOnOption())
    .action(async (assetId: number, file: string, opts: { wait?: boolean; failOn?: Level }) => {
      const type = CONTENT_TYPES[extname(file).toLowerCase()];
      if (!type) throw new UsageError(`${file}: the extension must be one of ${Object.keys(CONTENT_TYPES).join(", ")}`);
      let size: number;
      try {
        size = statSync(file).size;
      } catch {
        throw new UsageError(`${file}: no such file`);
      }
      const s = await session();
      let res: Response;
      try {
        res = await fetch(`${s.base}/v2/${encodeURIComponent(s.tenant)}/sources/${assetId}/batch_data`, {
          method: "POST",
          headers: { authorization: `Bearer ${s.token}`, "content-type": type, "content-length": String(size) },
          body: Readable.toWeb(createReadStream(file)) as unknown as ReadableStream,
          duplex: "half",
        } as RequestInit);
      } catch (err) {
        throw new ApiFailure(`upload: ${(err as Error).message}`);
      }
      if (!res.ok) throw await failure(res, "upload");
      const { job_id: jobId } = (await res.json()) as { job_id: string };
      if (!opts.wait) {
        print(s, { job_id: jobId }, [{ job_id: jobId }]);
        return run(0);
      }
      run(await finish(s, assetId, jobId, opts.failOn));
    });

  root
    .command("scan")
    .description("trigger a scan of an asset")
    .argument("<asset_id>", "the asset", positiveInt("asset_id"))
    .option("--wait", "wait for the scan and print its alerts")
    .addOption(failOnOption())
    .action(async (assetId: number, opts: { wait?: boolean; failOn?: Level }) => {
      const s = await session();
      const accepted = await ok(
        s.client.POST("/api/backend/{tenant}/configuration/assets/{assetId}/scans", {
          params: { path: { tenant: s.tenant, assetId } },
        }),
        "scan",
      );
      if (!opts.wait) {
        print(s, accepted, [{ job_id: accepted.job_id }]);
        return run(0);
      }
      run(await finish(s, assetId, accepted.job_id, opts.failOn));
    });

  return root;
}

/** Runs the CLI with `argv` (process.argv): resolves to the exit status. */
export async function main(argv: string[]): Promise<number> {
  let code = 0;
  const root = program((c) => {
    code = c;
  });
  root.configureOutput({ writeErr: (str) => process.stderr.write(str) });
  try {
    await root.parseAsync(argv);
    return code;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version are not errors; everything else commander reports is a usage error.
      if (err.code === "commander.helpDisplayed" || err.code === "commander.version") return 0;
      if (err.code === "dq.usage") process.stderr.write(`error: ${err.message}\n${root.helpInformation()}`);
      return 2;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      return 2;
    }
    if (err instanceof ApiFailure) {
      process.stderr.write(`error: ${err.message}${err.requestId ? ` (request id ${err.requestId})` : ""}\n`);
      return 3;
    }
    process.stderr.write(`error: ${(err as Error).message ?? String(err)}\n`);
    return 3;
  }
}

main(process.argv).then((code) => {
  process.exitCode = code;
});
