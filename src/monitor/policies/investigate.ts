/**
 * The investigator: where in the data an alert's problem sits. For missing values, from the
 * breakdown the scan collected (scan/profiler/breakdown.ts, or one more query by SQL); for a
 * row-count drop, from the category shares in the asset's history. It finds the values of the
 * asset's low-cardinality attributes that hold far more of the problem rows than of the rows —
 * "92 % of the missing email values come from country = DE, which holds 12 % of the rows".
 *
 * How it decides: a value is reported when it holds at least MIN_PROBLEM_ROWS problem rows, a
 * lift (share of the problem ÷ share of the rows) of at least MIN_LIFT, and when that many
 * problem rows would be unlikely if the problem were spread over the rows at random: under that
 * hypothesis its problem rows follow a binomial law (problem rows, share of rows), and the count
 * must stand MIN_Z standard deviations above its mean. Strongest first: by the excess of its share
 * of the problem over its share of the rows; at most MAX_ENTRIES.
 */
import type { AssetProfile } from "../../scan/profile";
import { baselinePoints, median } from "./anomaly";
import { attrMetric, unescapeName, valuePrefix } from "./metrics";
import type { InvestigationEntry, MetricHistory } from "./types";

export const MIN_PROBLEM_ROWS = 5;
export const MIN_LIFT = 1.5;
export const MIN_Z = 3;
export const MAX_ENTRIES = 5;

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Past scans a row-count investigation takes its baseline from. */
export const ROW_BASELINE_SCANS = 10;

type Candidate = InvestigationEntry & { excess: number };

/**
 * `value` of `attribute` as an entry when it holds `problemRows` of `problems` problem rows while
 * holding `rows` of `allRows` rows, and the concentration is beyond chance (see the module doc).
 */
function candidate(
  attribute: string,
  value: string,
  rows: number,
  allRows: number,
  problemRows: number,
  problems: number,
): Candidate | undefined {
  if (problemRows < MIN_PROBLEM_ROWS || problems < MIN_PROBLEM_ROWS || rows <= 0 || allRows <= 0) return undefined;
  const shareOfRows = rows / allRows;
  const shareOfProblem = problemRows / problems;
  const lift = shareOfProblem / shareOfRows;
  const mean = problems * shareOfRows;
  const sd = Math.sqrt(problems * shareOfRows * (1 - shareOfRows));
  if (lift < MIN_LIFT || sd <= 0 || (problemRows - mean) / sd < MIN_Z) return undefined;
  return {
    attribute,
    value,
    rows,
    problem_rows: problemRows,
    share_of_problem: round(shareOfProblem, 4),
    share_of_rows: round(shareOfRows, 4),
    lift: round(lift, 2),
    excess: shareOfProblem - shareOfRows,
  };
}

function strongest(found: Candidate[]): InvestigationEntry[] {
  return found
    .sort((a, b) => b.excess - a.excess || b.lift - a.lift)
    .slice(0, MAX_ENTRIES)
    .map(({ excess: _excess, ...entry }) => entry);
}

/** Where the missing (null or empty) values of `attribute` sit, strongest first; [] when nowhere in particular. */
export function investigateMissing(profile: AssetProfile, attribute: string): InvestigationEntry[] {
  const found: Candidate[] = [];
  for (const b of profile.breakdown ?? []) {
    if (b.attribute === attribute) continue;
    const problems = b.missing[attribute] ?? 0;
    for (const v of b.values) {
      const c = candidate(b.attribute, v.value, v.rows, b.rows, v.missing[attribute] ?? 0, problems);
      if (c) found.push(c);
    }
  }
  return strongest(found);
}

/**
 * Where a row-count drop lost its rows: for each categorical attribute with category history
 * (`attr:<a>:value:<v>` shares), each value's rows in the baseline (the median over the last
 * ROW_BASELINE_SCANS scans of share × non-null values) against its rows now; the values that lost
 * far more than their share of the rows. `rows` is the value's baseline rows, `problem_rows` the
 * rows it lost.
 */
export function investigateRowDrop(profile: AssetProfile, history: MetricHistory, jobId: string): InvestigationEntry[] {
  const found: Candidate[] = [];
  for (const a of profile.attributes) {
    const prefix = valuePrefix(a.name);
    const shareMetrics = Object.keys(history).filter((m) => m.startsWith(prefix));
    if (shareMetrics.length < 2) continue;
    const jobs = baselinePoints(history[attrMetric(a.name, "non_null")], jobId).slice(-ROW_BASELINE_SCANS);
    if (jobs.length === 0) continue;
    const now = new Map(a.top_values.map((t) => [t.value, t.count]));
    const values = shareMetrics.map((metric) => {
      const shares = new Map((history[metric] ?? []).map((h) => [h.job_id, h.value]));
      const past = jobs.map((j) => (shares.get(j.job_id) ?? 0) * j.value);
      const value = unescapeName(metric.slice(prefix.length));
      const baseline = median(past);
      return { value, baseline, lost: Math.max(0, baseline - (now.get(value) ?? 0)) };
    });
    const allRows = values.reduce((s, v) => s + v.baseline, 0);
    const lost = values.reduce((s, v) => s + v.lost, 0);
    for (const v of values) {
      const c = candidate(a.name, v.value, Math.round(v.baseline), allRows, Math.round(v.lost), Math.round(lost));
      if (c) found.push(c);
    }
  }
  return strongest(found);
}

const percent = (share: number) => `${Math.round(share * 1000) / 10} %`;

/** The sentence a person can act on, for the strongest entry. */
export function investigationSentence(entries: InvestigationEntry[], problem: string): string | undefined {
  const top = entries[0];
  if (!top) return undefined;
  return `${percent(top.share_of_problem)} of the ${problem} come from ${top.attribute} = ${top.value}, which holds ${percent(top.share_of_rows)} of the rows (lift ${top.lift}).`;
}
