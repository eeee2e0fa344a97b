/**
 * `dq`: the service from a terminal or a pipeline step. Configured by DQ_URL, DQ_API_KEY and
 * DQ_TENANT (or --url, --api-key, --tenant); the key is exchanged for a token once per run.
 *
 * Exit status (EXIT_STATUSES below, printed by every command's --help): 0 success (the gate
 * passed); 1 the job failed, or `--fail-on` tripped; 2 a usage error; 3 an API or network error
 * (the problem's detail and the request id on stderr); 4 `--wait` timed out.
 *
 * The gate (`--fail-on LEVEL`, which implies `--wait`) judges the asset as the scan leaves it: any
 * OPEN incident of the asset at LEVEL or above trips it, so a retried pipeline step fails for as
 * long as the data it checks is broken. `--new-only` narrows it to what this scan raised.
 *
 * Built by `npm install` (scripts/build-cli.mjs) into dist/dq.mjs, the package's `bin`.
 */
import { createReadStream, statSync } from "node:fs";
import { extname } from "node:path";
import { Readable } from "node:stream";
import { SingleBar } from "cli-progress";
import { Command, CommanderError, Option } from "commander";
import { type components, createDqClient, type DqClient } from "../clients/ts";

const LEVELS = ["LOW", "MEDIUM", "HIGH"] as const;
type Level = (typeof LEVELS)[number];

/** The exit statuses, as every command's help lists them (the ones it can end with). */
const EXIT_STATUSES: Record<number, string> = {
  0: "success (with --fail-on: the gate passed)",
  1:
    "the scan job FAILED or was CANCELLED, or --fail-on tripped: after the scan the asset has an OPEN\n" +
    "     incident at that severity or above (--new-only: this scan raised an alert at it or above)",
  2: "usage error (the message and the usage on stderr)",
  3: "API or network error (the problem's detail and the request id on stderr)",
  4: "--wait timed out (--timeout, default 30m); the scan goes on, its job id on stderr",
};

function exitStatusHelp(codes: number[]): string {
  return `\nExit status:\n${codes.map((c) => `  ${c}  ${EXIT_STATUSES[c]}`).join("\n")}`;
}

/** How long --wait waits for a scan when --timeout is not given: never forever. */
const DEFAULT_TIMEOUT = "30m";
const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

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

/** `--wait` ran out of time: exit status 4. */
class WaitTimeout extends Error {
  constructor(
    readonly jobId: string,
    readonly job: ScanJob | undefined,
    readonly after: string,
  ) {
    super(`--wait timed out after ${after}: job ${jobId} is still ${job?.status ?? "QUEUED"} (the scan goes on)`);
  }
}

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
  segment?: { attribute: string; value: string } | null;
  priority: string;
  description: string;
}

/** An incident as the list answers it. */
type Incident = components["schemas"]["Incident"];

/** What --wait does: how long it may take, and the gate it applies (none without --fail-on). */
interface WaitOptions {
  timeoutMs: number;
  timeout: string;
  failOn: Level | undefined;
  newOnly: boolean;
}

/**
 * The end of a --wait: every request after the scan was accepted (polls, alerts, incidents) must
 * answer before it, or the wait ends with a WaitTimeout naming the job as last seen.
 */
class WaitDeadline {
  private readonly at: number;
  /** The job as the last poll saw it. */
  job: ScanJob | undefined;
  constructor(
    readonly jobId: string,
    readonly opts: WaitOptions,
  ) {
    this.at = Date.now() + opts.timeoutMs;
  }
  get remaining(): number {
    return Math.max(0, this.at - Date.now());
  }
  timedOut(): WaitTimeout {
    return new WaitTimeout(this.jobId, this.job, this.opts.timeout);
  }
  /** A request aborted at the deadline: its data, a WaitTimeout, or an ApiFailure for other errors. */
  async request<T>(
    call: (signal: AbortSignal) => Promise<{ data?: T; error?: unknown; response: Response }>,
    what: string,
  ): Promise<T> {
    if (this.remaining === 0) throw this.timedOut();
    // Node's timers hold at most 2^31-1 ms (24.8 days); a longer wait is re-armed at each poll.
    const signal = AbortSignal.timeout(Math.min(this.remaining, 2 ** 31 - 1));
    try {
      return await ok(call(signal), what);
    } catch (err) {
      throw signal.aborted ? this.timedOut() : err;
    }
  }
}

/** Polls the job until it ends: a progress bar on a terminal, plain lines otherwise. */
async function waitFor(session: Session, assetId: number, deadline: WaitDeadline): Promise<ScanJob> {
  const tty = process.stderr.isTTY === true && !session.json;
  const bar = tty
    ? new SingleBar({ format: "scan {bar} {percentage}% | {rows} rows | {status}", stream: process.stderr })
    : undefined;
  bar?.start(100, 0, { rows: 0, status: "QUEUED" });
  let last = "";
  try {
    for (;;) {
      const job = await deadline.request(
        (signal) =>
          session.client.GET("/api/backend/{tenant}/configuration/assets/{assetId}/scans/{job_id}", {
            params: { path: { tenant: session.tenant, assetId, job_id: deadline.jobId } },
            signal,
          }),
        "scan status",
      );
      deadline.job = job;
      const pct = Math.round((job.progress.fraction ?? 0) * 100);
      if (bar) bar.update(pct, { rows: job.progress.rows, status: job.status });
      else if (!session.json) {
        const line = `${job.status} ${job.progress.rows} rows${job.progress.fraction === null ? "" : ` ${pct}%`}`;
        if (line !== last) process.stderr.write(`${line}\n`);
        last = line;
      }
      if (job.status === "SUCCEEDED" || job.status === "FAILED" || job.status === "CANCELLED") {
        bar?.update(job.status === "SUCCEEDED" ? 100 : pct, { status: job.status });
        return job;
      }
      if (deadline.remaining === 0) throw deadline.timedOut();
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, deadline.remaining)));
    }
  } finally {
    bar?.stop();
  }
}

const rank = (level: string) => LEVELS.indexOf(level as Level);

/** The same policy, attribute and segment: the incident an alert opened or joined. */
const sameSubject = (a: Alert, i: Incident) =>
  a.type === i.alert_policy_id &&
  (a.attribute ?? null) === i.attribute &&
  JSON.stringify(a.segment ?? null) === JSON.stringify(i.segment ?? null);

/** What `--wait` reports: on stdout with --json, and its exit status. */
interface WaitReport {
  job: ScanJob | null;
  alerts: Alert[];
  fail_on: Level | null;
  new_only: boolean;
  verdict: "PASS" | "FAIL" | "TIMEOUT";
  exit_status: 0 | 1 | 4;
  /** One sentence: why this verdict (also the last line on stderr). */
  reason: string;
  /** Whether --fail-on tripped. */
  tripped: boolean;
  /** The asset's OPEN incidents that tripped the gate (--new-only: those this scan's alerts raised). */
  tripped_by: Incident[];
}

/**
 * The gate, after a scan that succeeded: the asset's OPEN incidents at `level` or above trip it;
 * with --new-only, this scan's alerts at that priority or above do (and name their incidents).
 */
async function judge(
  session: Session,
  assetId: number,
  alerts: Alert[],
  level: Level,
  newOnly: boolean,
  deadline: WaitDeadline,
): Promise<Pick<WaitReport, "tripped" | "tripped_by" | "reason">> {
  const open = await deadline.request(
    (signal) =>
      session.client.GET("/api/backend/{tenant}/incidents", {
        params: {
          path: { tenant: session.tenant },
          query: {
            asset_ids: String(assetId),
            states: "OPEN",
            severities: LEVELS.filter((l) => rank(l) >= rank(level)).join(","),
          },
        },
        signal,
      }),
    "incidents",
  );
  if (newOnly) {
    const raised = alerts.filter((a) => rank(a.priority) >= rank(level));
    const tripped_by = open.filter((i) => raised.some((a) => sameSubject(a, i)));
    return raised.length > 0
      ? { tripped: true, tripped_by, reason: `${raised.length} alert(s) at ${level} or above raised by this scan` }
      : { tripped: false, tripped_by, reason: `no alert at ${level} or above raised by this scan` };
  }
  return open.length > 0
    ? {
        tripped: true,
        tripped_by: open,
        reason: `${open.length} OPEN incident(s) at ${level} or above on asset ${assetId}`,
      }
    : { tripped: false, tripped_by: [], reason: `no OPEN incident at ${level} or above on asset ${assetId}` };
}

/** Waits for the job and judges it: the report, or a WaitTimeout (after printing it with --json). */
async function report(session: Session, assetId: number, deadline: WaitDeadline): Promise<WaitReport> {
  const { jobId, opts } = deadline;
  const base = { alerts: [], fail_on: opts.failOn ?? null, new_only: opts.newOnly, tripped: false, tripped_by: [] };
  let job: ScanJob;
  try {
    job = await waitFor(session, assetId, deadline);
    if (job.status !== "SUCCEEDED") {
      const reason = `job ${jobId} ${job.status}: ${job.error ?? "no reason given"}`;
      return { ...base, job, verdict: "FAIL", exit_status: 1, reason };
    }
    const alerts = await deadline.request(
      (signal) =>
        session.client.POST("/api/backend/{tenant}/configuration/sources/{sourceID}/alerts", {
          params: { path: { tenant: session.tenant, sourceID: assetId }, query: { job_id: jobId } },
          signal,
        }),
      "alerts",
    );
    const scanned = `job ${jobId} SUCCEEDED: ${alerts.length} alert(s)`;
    if (!opts.failOn) return { ...base, job, alerts, verdict: "PASS", exit_status: 0, reason: scanned };
    const gate = await judge(session, assetId, alerts, opts.failOn, opts.newOnly, deadline);
    const reason = `${scanned}; --fail-on ${opts.failOn} ${gate.tripped ? "tripped" : "passed"}: ${gate.reason}`;
    return {
      ...base,
      job,
      alerts,
      ...gate,
      reason,
      verdict: gate.tripped ? "FAIL" : "PASS",
      exit_status: gate.tripped ? 1 : 0,
    };
  } catch (err) {
    if (err instanceof WaitTimeout && session.json) {
      print(session, { ...base, job: err.job ?? null, verdict: "TIMEOUT", exit_status: 4, reason: err.message }, []);
    }
    throw err;
  }
}

/** Waits for the job, prints its alerts and the gate's verdict; returns the exit status. */
async function finish(session: Session, assetId: number, jobId: string, opts: WaitOptions): Promise<number> {
  const result = await report(session, assetId, new WaitDeadline(jobId, opts));
  print(
    session,
    result,
    result.alerts.map((a) => ({
      priority: a.priority,
      policy: a.type,
      attribute: a.attribute ?? "",
      alert: a.description,
    })),
  );
  if (!session.json) {
    if (result.tripped_by.length > 0) {
      process.stdout.write(`\nincidents that tripped --fail-on ${opts.failOn}:\n`);
      print(
        session,
        null,
        result.tripped_by.map((i) => ({
          incident: i.id,
          severity: i.severity,
          policy: i.alert_policy_id,
          attribute: i.attribute ?? "",
          opened_at: i.opened_at,
        })),
      );
    }
    process.stderr.write(`${result.reason}\n`);
  }
  return result.exit_status;
}

function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0) throw new CommanderError(2, "dq.usage", `${name} must be a positive integer`);
    return n;
  };
}

/** A duration such as 90s, 10m, 1.5h or 500ms (a bare number is seconds), in milliseconds. */
function duration(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(value.trim());
  const ms = m ? Number(m[1]) * DURATION_UNITS[m[2] ?? "s"]! : Number.NaN;
  if (!(ms >= 1)) throw new UsageError(`--timeout ${value}: give a duration such as 30s, 10m or 1h`);
  return ms;
}

interface WaitFlags {
  wait?: boolean;
  failOn?: Level;
  newOnly?: boolean;
  timeout: string;
}

/** Adds --wait and the options that apply to it to a command that starts a scan. */
function withWaitOptions(command: Command): Command {
  return command
    .option("--wait", "wait for the scan, print its alerts")
    .addOption(
      new Option(
        "--fail-on <level>",
        "the gate: exit 1 when, after the scan, the asset has an OPEN incident at this severity or above (implies --wait)",
      )
        .choices(LEVELS)
        .implies({ wait: true }),
    )
    .option(
      "--new-only",
      "with --fail-on: count only what this scan raised (alerts that opened or escalated an incident)",
    )
    .addOption(
      new Option("--timeout <duration>", "give up waiting after this long (30s, 10m, 1h): exit 4 (implies --wait)")
        .default(DEFAULT_TIMEOUT)
        .implies({ wait: true }),
    )
    .addHelpText("after", exitStatusHelp([0, 1, 2, 3, 4]));
}

/** The wait a command's flags ask for; undefined without --wait. */
function waitOptions(flags: WaitFlags): WaitOptions | undefined {
  if (flags.newOnly && !flags.failOn) throw new UsageError("--new-only narrows --fail-on: give --fail-on too");
  if (!flags.wait) return undefined;
  return {
    timeoutMs: duration(flags.timeout),
    timeout: flags.timeout,
    failOn: flags.failOn,
    newOnly: flags.newOnly === true,
  };
}

export function program(run: (code: number) => void): Command {
  const root = new Command("dq")
    .description("Data quality monitoring from the command line")
    .option("--url <url>", "the service's URL (default: $DQ_URL)")
    .option("--api-key <key>", "an API key (default: $DQ_API_KEY)")
    .option("--tenant <id>", "the tenant (default: $DQ_TENANT)")
    .option("--json", "print one JSON document on stdout, nothing else")
    .exitOverride()
    .showHelpAfterError()
    .addHelpText("after", exitStatusHelp([0, 1, 2, 3, 4]));
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
      const list = await ok(
        s.client.GET("/api/backend/{tenant}/incidents", {
          params: {
            path: { tenant: s.tenant },
            query: {
              ...(opts.severity ? { severities: opts.severity } : {}),
              ...(opts.open ? { states: "OPEN" } : {}),
            },
          },
        }),
        "incidents",
      );
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

  const upload = root
    .command("upload")
    .description("upload a batch (CSV, NDJSON, JSON or Parquet, by extension) to an asset; streamed, never read whole")
    .argument("<asset_id>", "the asset", positiveInt("asset_id"))
    .argument("<file>", "the file");
  withWaitOptions(upload).action(async (assetId: number, file: string, flags: WaitFlags) => {
    const wait = waitOptions(flags);
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
    if (!wait) {
      print(s, { job_id: jobId }, [{ job_id: jobId }]);
      return run(0);
    }
    run(await finish(s, assetId, jobId, wait));
  });

  const scan = root
    .command("scan")
    .description("trigger a scan of an asset")
    .argument("<asset_id>", "the asset", positiveInt("asset_id"));
  withWaitOptions(scan).action(async (assetId: number, flags: WaitFlags) => {
    const wait = waitOptions(flags);
    const s = await session();
    const accepted = await ok(
      s.client.POST("/api/backend/{tenant}/configuration/assets/{assetId}/scans", {
        params: { path: { tenant: s.tenant, assetId } },
      }),
      "scan",
    );
    if (!wait) {
      print(s, accepted, [{ job_id: accepted.job_id }]);
      return run(0);
    }
    run(await finish(s, assetId, accepted.job_id, wait));
  });

  // Every command's help lists the exit statuses it can end with (upload and scan: all of them).
  for (const group of [projects, assets, incidents]) {
    for (const command of [group, ...group.commands]) command.addHelpText("after", exitStatusHelp([0, 2, 3]));
  }
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
    if (err instanceof WaitTimeout) {
      process.stderr.write(`error: ${err.message}\n`);
      return 4;
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
