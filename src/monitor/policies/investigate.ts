/**
 * The investigator: where in the data an alert's problem sits. From the breakdown a file scan
 * collected in the same pass (scan/profiler/breakdown.ts), it finds the values of the asset's
 * other low-cardinality attributes that hold far more of the problem rows than of the rows —
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

export interface InvestigationEntry {
  /** The attribute and value the problem concentrates in. */
  attribute: string;
  value: string;
  /** Rows holding the value, and of those, the rows with the problem. */
  rows: number;
  problem_rows: number;
  /** problem_rows ÷ all problem rows; rows ÷ all rows. */
  share_of_problem: number;
  share_of_rows: number;
  /** share_of_problem ÷ share_of_rows. */
  lift: number;
}

export const MIN_PROBLEM_ROWS = 5;
export const MIN_LIFT = 1.5;
export const MIN_Z = 3;
export const MAX_ENTRIES = 5;

const round = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** Where the missing (null or empty) values of `attribute` sit, strongest first; [] when nowhere in particular. */
export function investigateMissing(profile: AssetProfile, attribute: string): InvestigationEntry[] {
  const found: Array<InvestigationEntry & { excess: number }> = [];
  for (const b of profile.breakdown ?? []) {
    if (b.attribute === attribute) continue;
    const problems = b.missing[attribute] ?? 0;
    if (problems < MIN_PROBLEM_ROWS || b.rows <= 0) continue;
    for (const v of b.values) {
      const problemRows = v.missing[attribute] ?? 0;
      if (problemRows < MIN_PROBLEM_ROWS) continue;
      const shareOfRows = v.rows / b.rows;
      const shareOfProblem = problemRows / problems;
      const lift = shareOfProblem / shareOfRows;
      const mean = problems * shareOfRows;
      const sd = Math.sqrt(problems * shareOfRows * (1 - shareOfRows));
      if (lift < MIN_LIFT || sd <= 0 || (problemRows - mean) / sd < MIN_Z) continue;
      found.push({
        attribute: b.attribute,
        value: v.value,
        rows: v.rows,
        problem_rows: problemRows,
        share_of_problem: round(shareOfProblem, 4),
        share_of_rows: round(shareOfRows, 4),
        lift: round(lift, 2),
        excess: shareOfProblem - shareOfRows,
      });
    }
  }
  return found
    .sort((a, b) => b.excess - a.excess || b.lift - a.lift)
    .slice(0, MAX_ENTRIES)
    .map(({ excess: _excess, ...entry }) => entry);
}

const percent = (share: number) => `${Math.round(share * 1000) / 10} %`;

/** The sentence a person can act on, for the strongest entry. */
export function investigationSentence(entries: InvestigationEntry[], problem: string): string | undefined {
  const top = entries[0];
  if (!top) return undefined;
  return `${percent(top.share_of_problem)} of the ${problem} come from ${top.attribute} = ${top.value}, which holds ${percent(top.share_of_rows)} of the rows (lift ${top.lift}).`;
}
