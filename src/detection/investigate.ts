/**
 * The investigator: where in the data an alert's problem sits. For missing values and values of
 * another type, from the breakdown the scan collected (scan/profiler/breakdown.ts, or one more
 * query by SQL); for a quantity shift, from each value's mean in the breakdown against its own
 * history; for a row-count drop, from the category shares in the asset's history. It finds the
 * values of the asset's low-cardinality attributes that hold far more of the problem rows than of
 * the rows — "92 % of the missing email values come from country = DE, which holds 12 % of the rows".
 *
 * How it decides: a value is reported when it holds at least MIN_PROBLEM_ROWS problem rows, a
 * lift (share of the problem ÷ share of the rows) of at least MIN_LIFT, and when that many
 * problem rows would be unlikely if the problem were spread over the rows at random: under that
 * hypothesis its problem rows follow a binomial law (problem rows, share of rows), and the count
 * must stand MIN_Z standard deviations above its mean. Strongest first: by the excess of its share
 * of the problem over its share of the rows; at most MAX_ENTRIES.
 */
import type { AssetProfile, BreakdownValue } from "../contracts/profile";
import { baselinePoints, median } from "./anomaly";
import { attrMetric, meanByMetric, unescapeName, valuePrefix } from "./metrics";
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
  return investigateCounts(profile, (v) => v.missing[attribute] ?? 0, attribute);
}

/** Where the values of `attribute` not of its type sit, strongest first; [] when nowhere in particular. */
export function investigateMismatches(profile: AssetProfile, attribute: string): InvestigationEntry[] {
  return investigateCounts(profile, (v) => v.mismatched?.[attribute] ?? 0, attribute);
}

/** Where the values of `attribute` with one of the `patterns` (shapes) sit, strongest first. */
export function investigatePatterns(
  profile: AssetProfile,
  attribute: string,
  patterns: readonly string[],
): InvestigationEntry[] {
  const problem = (v: BreakdownValue) => patterns.reduce((s, p) => s + (v.shapes?.[attribute]?.[p] ?? 0), 0);
  return investigateCounts(profile, problem, attribute);
}

/** Where the rows repeating an earlier row (whole, or by id) sit, strongest first. */
export function investigateDuplicates(
  profile: AssetProfile,
  kind: "duplicate_rows" | "duplicate_ids",
): InvestigationEntry[] {
  return investigateCounts(profile, (v) => v[kind] ?? 0);
}

/**
 * Where the problem rows (`problems` of each breakdown value) concentrate, against the rows of
 * the breakdown attribute; an `attribute`'s own breakdown is left out.
 */
function investigateCounts(
  profile: AssetProfile,
  problems: (v: BreakdownValue) => number,
  attribute?: string,
): InvestigationEntry[] {
  const found: Candidate[] = [];
  for (const b of profile.breakdown ?? []) {
    if (b.attribute === attribute) continue;
    const all = b.values.reduce((s, v) => s + problems(v), 0);
    for (const v of b.values) {
      const c = candidate(b.attribute, v.value, v.rows, b.rows, problems(v), all);
      if (c) found.push(c);
    }
  }
  return strongest(found);
}

/** Past scans a value's mean needs before a quantity shift is split by value. */
export const MIN_SHIFT_HISTORY = 3;

/** A breakdown value's mean of a quantity now, against its own past means. */
interface ValueMove {
  value: string;
  rows: number;
  /** Its baseline mean (median of its past means) and its move from it. */
  base: number;
  move: number;
  /** The move's standard error: this scan's sampling and the spread of its past means. */
  noise: number;
}

/**
 * How far `v` moved beyond the other values, in standard errors, read both ways a change spread
 * at random over the rows moves them: by the same amount (an offset: each value's mean moves
 * alike) and by the same factor (a unit error, × 100 on random rows: each value's mean moves in
 * proportion to it, so the values with the largest means carry most of the move). The smaller
 * of the two, signed as v's move: a value is only as concentrated as the reading that explains it best.
 */
function beyondTheRest(v: ValueMove, rest: readonly ValueMove[]): number {
  const rows = rest.reduce((s, u) => s + u.rows, 0);
  const mass = rest.reduce((s, u) => s + u.rows * Math.abs(u.base), 0);
  const moved = rest.reduce((s, u) => s + u.rows * u.move, 0);
  const noise = Math.sqrt(rest.reduce((s, u) => s + (u.rows * u.noise) ** 2, 0));
  const sign = Math.sign(v.move);
  const z = (gap: number, se: number) => (se > 0 ? (sign * gap) / se : sign * gap > 0 ? Number.POSITIVE_INFINITY : 0);
  const offset = rows > 0 ? z(v.move - moved / rows, Math.hypot(v.noise, noise / rows)) : Number.POSITIVE_INFINITY;
  // A value whose mean was 0 cannot have moved by a factor; nor can a rest without a level.
  const factor =
    mass > 0 && v.base !== 0
      ? z(v.move / Math.abs(v.base) - moved / mass, Math.hypot(v.noise / Math.abs(v.base), noise / mass))
      : Number.POSITIVE_INFINITY;
  return Math.min(offset, factor);
}

/**
 * Which values moved a quantity: for each breakdown attribute, each value's mean of `attribute`
 * now (from the breakdown) against its own baseline (the median of its `mean_by` metric over the
 * last ROW_BASELINE_SCANS scans). A value is named when its move stands MIN_Z standard errors
 * beyond the noise (its mean's standard error in this scan and the spread of its past means,
 * together) and MIN_Z beyond the other values' moves, whether those are read as an offset or as a
 * factor (beyondTheRest): a change spread at random over the rows names no value, not even the
 * one with the largest values. Its share of the problem is its share of the whole displacement,
 * Σ over the values of rows × |mean move|; it must be MIN_LIFT times both its share of the rows and
 * its share of the metric (Σ rows × |mean| before the move, `share_of_metric`); `problem_rows`
 * are the rows of a value that moved. Strongest first.
 */
export function investigateShift(
  profile: AssetProfile,
  history: MetricHistory,
  jobId: string,
  attribute: string,
): InvestigationEntry[] {
  const found: Candidate[] = [];
  for (const b of profile.breakdown ?? []) {
    if (b.attribute === attribute) continue;
    const moves = b.values.flatMap((v): ValueMove[] => {
      const now = v.numeric?.[attribute];
      if (!now || now.count <= 0) return [];
      const past = baselinePoints(history[meanByMetric(attribute, b.attribute, v.value)], jobId)
        .slice(-ROW_BASELINE_SCANS)
        .map((p) => p.value);
      if (past.length < MIN_SHIFT_HISTORY) return [];
      const base = median(past);
      const spread = 1.4826 * median(past.map((x) => Math.abs(x - base)));
      const noise = Math.sqrt(now.variance / now.count + spread * spread);
      return [{ value: v.value, rows: now.count, base, move: now.mean - base, noise }];
    });
    const rows = moves.reduce((s, m) => s + m.rows, 0);
    const mass = moves.reduce((s, m) => s + m.rows * Math.abs(m.base), 0);
    const displacement = moves.reduce((s, m) => s + m.rows * Math.abs(m.move), 0);
    if (rows <= 0 || displacement <= 0) continue;
    for (const m of moves) {
      if (m.rows < MIN_PROBLEM_ROWS) continue;
      const moved = m.noise > 0 ? Math.abs(m.move) / m.noise >= MIN_Z : m.move !== 0;
      if (
        !moved ||
        beyondTheRest(
          m,
          moves.filter((u) => u !== m),
        ) < MIN_Z
      )
        continue;
      const shareOfProblem = (m.rows * Math.abs(m.move)) / displacement;
      const shareOfRows = m.rows / rows;
      const shareOfMetric = mass > 0 ? (m.rows * Math.abs(m.base)) / mass : shareOfRows;
      if (shareOfProblem < MIN_LIFT * Math.max(shareOfRows, shareOfMetric)) continue;
      found.push({
        attribute: b.attribute,
        value: m.value,
        rows: m.rows,
        problem_rows: m.rows,
        share_of_problem: round(shareOfProblem, 4),
        share_of_rows: round(shareOfRows, 4),
        share_of_metric: round(shareOfMetric, 4),
        lift: round(shareOfProblem / shareOfRows, 2),
        excess: shareOfProblem - Math.max(shareOfRows, shareOfMetric),
      });
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

/**
 * The sentence a person can act on, for the strongest entry; `verb` agrees with `problem`, and
 * `quantity` names what a shift's `share_of_metric` is a share of.
 */
export function investigationSentence(
  entries: InvestigationEntry[],
  problem: string,
  verb = "come",
  quantity?: string,
): string | undefined {
  const top = entries[0];
  if (!top) return undefined;
  const metric =
    top.share_of_metric !== undefined && quantity
      ? ` and ${percent(top.share_of_metric)} of the sum of ${quantity}`
      : "";
  return `${percent(top.share_of_problem)} of the ${problem} ${verb} from ${top.attribute} = ${top.value}, which holds ${percent(top.share_of_rows)} of the rows${metric} (lift ${top.lift}).`;
}
