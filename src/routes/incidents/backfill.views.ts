import type { z } from "@hono/zod-openapi";
import type { IncidentBackfillRow } from "../../db/schema";
import type { BackfillJobSchema } from "./incidents.schemas";

/** The API's view of a backfill row (GET …/incidents/historical/{jobId}); the cursor stays inside. */
export function backfillView(job: IncidentBackfillRow): z.infer<typeof BackfillJobSchema> {
  return {
    job_id: job.id,
    status: job.status,
    since: job.since,
    until: job.until,
    requested_by: job.requestedBy,
    started_at: job.startedAt,
    finished_at: job.finishedAt,
    assets_total: job.assetsTotal,
    assets_done: job.assetsDone,
    incidents: job.incidents,
    alerts: job.alerts,
    errors: job.errors,
  };
}
