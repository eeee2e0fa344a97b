/**
 * bench/detection: the client of the running Worker. Public HTTP API only, as a customer would
 * use it: a tenant (platform admin), a project, an S3 connection and S3 assets; CSV batches
 * uploaded as `text/csv` to POST /v2/{tenant}/sources/{id}/batch_data (stored in R2, scanned
 * from the queue); the job polled until it finishes; its alerts, and the incidents with their
 * history. Transient failures (network, 5xx, 429) are retried a few times and counted.
 */

/** An alert as the scan-alerts operation returns it (the fields the benchmark reads). */
export interface Alert {
  id: number;
  type: string;
  attribute: string | null;
  priority: string;
  description: string;
  job_id: string;
  metric: string;
  details: Record<string, unknown>;
}

/** An incident as the list returns it (the fields the benchmark reads). */
export interface IncidentSummary {
  id: number;
  asset_id: string;
  alert_policy_id: string;
  attribute: string | null;
  segment: { attribute: string; value: string } | null;
  state: string;
}

/** An incident with its history (GET …/incidents/{id}). */
export interface IncidentDetail {
  id: number;
  asset_id: string;
  alert_policy_id: string;
  attribute: string | null;
  state: string;
  alert_count: number;
  opened_at: string;
  metrics: Array<{ alert_id: number; job_id: string }>;
  history: Array<{ from_state: string | null; to_state: string; job_id: string | null; alert_refs: number[] }>;
}

/** One scan of an asset as the benchmark records it: which batch, the job, and the alerts it raised. */
export interface ScanRecord {
  batch: string;
  job: string;
  status: string;
  error?: string;
  alerts: Alert[];
  /** Earlier uploads of this batch whose job was never delivered by the queue (see waitForJob). */
  lostJobs?: string[];
}

export interface ScanJob {
  status: string;
  error: string | null;
  attempts: number;
  started_at: string | null;
  progress?: { rows?: number };
}

/** What went wrong talking to the service, counted for the report. */
export interface ServiceTrouble {
  retries: number;
  /** "METHOD path-pattern status" → count, for every non-2xx answer (retried or not). */
  statuses: Record<string, number>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `work` on every item, at most `limit` at a time. */
export async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

export class DqService {
  readonly trouble: ServiceTrouble = { retries: 0, statuses: {} };

  constructor(
    readonly base: string,
    private readonly key: string,
    readonly tenant: string,
  ) {}

  private async request<T>(method: string, path: string, body?: { json?: unknown; csv?: string }): Promise<T> {
    const headers: Record<string, string> = { "X-SVC-Key": this.key };
    let payload: string | undefined;
    if (body?.json !== undefined) {
      headers["Content-Type"] = "application/json";
      payload = JSON.stringify(body.json);
    } else if (body?.csv !== undefined) {
      headers["Content-Type"] = "text/csv";
      payload = body.csv;
    }
    for (let attempt = 1; ; attempt++) {
      let status = 0;
      let text = "";
      try {
        const res = await fetch(`${this.base}${path}`, { method, headers, body: payload });
        status = res.status;
        text = await res.text();
        if (res.ok) return (text ? JSON.parse(text) : undefined) as T;
      } catch (err) {
        text = String(err);
        // The answer was cut off after its status (an overloaded local runtime): a GET may be
        // asked again; a POST may have taken effect, so it is not repeated.
        if (method === "GET") status = 0;
      }
      const key = `${method} ${
        path
          .replace(/\d+/g, "{n}")
          .replace(/[0-9a-f-]{20,}/g, "{id}")
          .split("?")[0]
      } ${status || "network"}`;
      this.trouble.statuses[key] = (this.trouble.statuses[key] ?? 0) + 1;
      const transient = status === 0 || status === 429 || status >= 500;
      if (!transient || attempt >= 5) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 500)}`);
      this.trouble.retries += 1;
      await sleep(250 * 2 ** attempt);
    }
  }

  /** Creates the tenant (PUT by the platform administrator). */
  static async bootstrap(base: string, adminKey: string, tenant: string): Promise<DqService> {
    const service = new DqService(base, adminKey, tenant);
    await service.request("PUT", `/backend/private/configuration/tenants/${tenant}`, {
      json: { name: `Detection bench ${tenant}` },
    });
    return service;
  }

  async createProject(name: string): Promise<number> {
    const p = await this.request<{ id: number }>("POST", `/api/backend/${this.tenant}/configuration/projects`, {
      json: { name },
    });
    return p.id;
  }

  /** An S3 connection: uploads land in the service's own bucket, so it is never contacted. */
  async createConnection(projectId: number, name: string): Promise<number> {
    const c = await this.request<{ id: number }>(
      "POST",
      `/api/backend/${this.tenant}/configuration/projects/${projectId}/connections`,
      {
        json: {
          name,
          type: "S3",
          payload: { bucket: "detection-bench" },
          credential: { type: "AWS", payload: { access_key: "AKIABENCH", secret_key: "bench-secret" } },
        },
      },
    );
    return c.id;
  }

  /** An S3 CSV asset (no id or timestamp attribute: the batches have neither). */
  async createAsset(projectId: number, connectionId: number, name: string): Promise<number> {
    const a = await this.request<{ id: number }>(
      "POST",
      `/api/backend/${this.tenant}/configuration/projects/${projectId}/assets`,
      {
        json: {
          name,
          type: "S3",
          connection_id: connectionId,
          payload: { path: `${name}/*.csv`, format: "csv" },
          options: {},
        },
      },
    );
    return a.id;
  }

  /** Uploads a CSV batch; returns the queued scan job's id. */
  async upload(assetId: number, csv: string): Promise<string> {
    const r = await this.request<{ job_id: string }>("POST", `/v2/${this.tenant}/sources/${assetId}/batch_data`, {
      csv,
    });
    return r.job_id;
  }

  async scanJob(assetId: number, jobId: string): Promise<ScanJob> {
    return this.request("GET", `/api/backend/${this.tenant}/configuration/assets/${assetId}/scans/${jobId}`);
  }

  /**
   * Polls a job until SUCCEEDED or FAILED (backing off from 100 ms to 1 s), or until it stalls:
   * still QUEUED and never started after `undeliveredMs` (its queue message did not reach the
   * consumer), or RUNNING for more than `hungMs` (a scan takes a second or two). Both were seen
   * under wrangler dev (see bench/README.md); the job is then returned as it is, with `stalled`.
   */
  async waitForJob(
    assetId: number,
    jobId: string,
    { undeliveredMs = 60_000, hungMs = 90_000 } = {},
  ): Promise<ScanJob & { stalled?: "undelivered" | "hung" }> {
    const start = Date.now();
    let delay = 100;
    for (;;) {
      const job = await this.scanJob(assetId, jobId);
      if (job.status === "SUCCEEDED" || job.status === "FAILED") return job;
      const now = Date.now();
      if (job.status === "QUEUED" && !job.started_at && now - start > undeliveredMs) {
        return { ...job, stalled: "undelivered" };
      }
      const since = Math.max(start, job.started_at ? Date.parse(job.started_at) : start);
      if (job.status === "RUNNING" && now - since > hungMs) return { ...job, stalled: "hung" };
      await sleep(delay);
      delay = Math.min(1000, delay * 1.5);
    }
  }

  /** The alerts one scan job raised. */
  async alerts(assetId: number, jobId: string): Promise<Alert[]> {
    return this.request("POST", `/api/backend/${this.tenant}/configuration/sources/${assetId}/alerts?job_id=${jobId}`);
  }

  /** Every incident of a project, all pages (the list has no asset filter; project_ids is the narrowest). */
  async incidents(projectId: number): Promise<IncidentSummary[]> {
    const out: IncidentSummary[] = [];
    // The default range of the list is all time; only the page size and the cursor change.
    let path: string | undefined = `/api/backend/${this.tenant}/incidents?project_ids=${projectId}&limit=1000`;
    while (path) {
      const res: Response = await fetch(`${this.base}${path}`, { headers: { "X-SVC-Key": this.key } });
      if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
      out.push(...((await res.json()) as IncidentSummary[]));
      path = /<([^>]+)>;\s*rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    }
    return out;
  }

  async incident(id: number): Promise<IncidentDetail> {
    return this.request("GET", `/api/backend/${this.tenant}/incidents/${id}`);
  }

  /** Closes an incident by hand with a reason, as a user triaging it would (PATCH …/incidents/{id}). */
  async closeIncident(id: number, reason: string, note: string): Promise<void> {
    await this.request("PATCH", `/api/backend/${this.tenant}/incidents/${id}`, {
      json: { state: "CLOSED", reason, note },
    });
  }
}
