/**
 * distribution_drift of a zero-inflated quantity (issue 41, point 2): a money column that is 0 in
 * most rows, the share of zeros wandering between scans within its usual range. The atoms (exact
 * values holding a large share) are judged as categories against their history, the rest of the
 * values by KS on their own CDF; a move of the zero share within its range is no drift.
 */
import { describe, expect, it } from "vitest";
import { evaluate, type MetricHistory } from "../../src/detection";
import { prng } from "../support/random";
import { type Cell, profileRows, record } from "./fixtures";

const TRIPS = { id: 8, name: "trips", type: "CSV" };
const COLUMNS = [{ name: "surcharge", type: "number" as const }];

/** The share of zeros per scan: drawn in [low, low + width), or forced. */
interface Zeros {
  low: number;
  width: number;
}

/** One scan of 4,000 trips: surcharge 0 in a share of `zeros`, else log-uniform in 1..20 times `scale`. */
function trips(scan: number, zeros: Zeros, opts: { scale?: number; share?: number }) {
  const rand = prng(900 + scan);
  const share = opts.share ?? zeros.low + zeros.width * rand();
  const rows: Array<Record<string, Cell>> = [];
  for (let i = 0; i < 4000; i++) {
    const u = rand();
    const v = rand();
    rows.push({ surcharge: u < share ? 0 : Math.round(20 ** v * (opts.scale ?? 1) * 100) / 100 });
  }
  return profileRows(COLUMNS, rows);
}

function judge(history: MetricHistory, scan: number, zeros: Zeros, opts: { scale?: number; share?: number } = {}) {
  const job = { job_id: `j${scan}`, scan_time: new Date(Date.UTC(2025, 0, 1 + scan)).toISOString() };
  const evaluation = evaluate({
    asset: TRIPS,
    ...job,
    profile: trips(scan, zeros, opts),
    history,
    kinds: { surcharge: "quantity" },
  });
  const drift = evaluation.alerts.filter((a) => a.policy === "distribution_drift");
  return { drift, history: record(history, job, evaluation) };
}

function trained(zeros: Zeros, scans = 18) {
  let history: MetricHistory = {};
  for (let i = 0; i < scans; i++) history = judge(history, i, zeros).history;
  return history;
}

/** Zeros in 50..60 % of the rows (their share crosses the median), and in 94.5..96.5 % (it crosses the 95th percentile). */
const HALF: Zeros = { low: 0.5, width: 0.1 };
const MOST: Zeros = { low: 0.945, width: 0.02 };

describe("distribution_drift of a zero-inflated quantity", () => {
  for (const [name, zeros] of [
    ["half", HALF],
    ["most", MOST],
  ] as const) {
    it(`the zero share moving within its usual range is no drift (zeros in ${name} of the rows)`, () => {
      let history = trained(zeros);
      const alerts: string[] = [];
      for (let scan = 18; scan < 48; scan++) {
        const r = judge(history, scan, zeros);
        alerts.push(...r.drift.map((a) => a.description));
        history = r.history;
      }
      expect(alerts).toEqual([]);
    });

    it(`a zero share far outside its range is a drift, stated as the share of 0 (zeros in ${name} of the rows)`, () => {
      const { drift } = judge(trained(zeros), 18, zeros, { share: 0.8 });
      expect(drift.map((a) => a.metric)).toEqual(["attr:surcharge:atom:0"]);
      expect(drift[0]!.description).toMatch(
        /^The share of the value 0 of attribute surcharge \(quantity\) in trips is (79|80)\.\d% \(\d+ of 4000\), (above|below) the allowed /,
      );
    });
  }

  it("a drift of the rest of the values is one, judged without the zeros", () => {
    const { drift } = judge(trained(HALF), 18, HALF, { scale: 1.6 });
    expect(drift.map((a) => a.metric)).toEqual(["attr:surcharge:ks"]);
    expect(drift[0]!.description).toMatch(
      /other than the value 0 drifted .* the share of 0 stayed within its usual range\.$/,
    );
  });
});
