import type { dqScores } from "../../db/schema";
export function dqScoreView(row: typeof dqScores.$inferSelect) {
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
