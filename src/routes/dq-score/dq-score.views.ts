import type { DqScoreEntry } from "../../settings/dq-score";
export function dqScoreView(row: DqScoreEntry) {
  return {
    job_id: row.jobId,
    scored_at: row.scoredAt,
    completeness: row.completeness,
    accuracy: row.accuracy,
    consistency: row.consistency,
    timeliness: row.timeliness,
    overall: row.overall,
  };
}
