/**
 * The share rules on real-data shapes the detection benchmark found: a share that trends scan
 * after scan, categories that move by a fifth of their share, lists of the most frequent values
 * only, and timestamps stamped with one moment. Each case failed before its rule.
 */
import { describe, expect, it } from "vitest";
import type { AttributeProfile } from "../../src/contracts/profile";
import type { AttributeKind } from "../../src/db/schema";
import { evaluate, type MetricHistory } from "../../src/detection";
import { shareBaseline } from "../../src/detection/anomaly";
import { prng } from "../support/random";
import { alertKeys, pastPoints } from "./fixtures";

function run(attribute: AttributeProfile, history: MetricHistory, kind: AttributeKind) {
  return evaluate({
    asset: { id: 1, name: "strikes", type: "CSV" },
    job_id: "now",
    scan_time: "2025-02-01T00:00:00.000Z",
    profile: { row_count: attribute.count, schema: [], attributes: [attribute], sampled: false },
    history,
    kinds: { [attribute.name]: kind },
  });
}

function attribute(name: string, n: number, fields: Partial<AttributeProfile>): AttributeProfile {
  return {
    name,
    inferred_type: "string",
    count: n,
    nulls: 0,
    empties: 0,
    distinct: 1,
    distinct_exact: true,
    top_values: [],
    type_counts: { string: n },
    type_mismatches: 0,
    patterns: [],
    ...fields,
  };
}

/** Past scans' shares of each value (a row per scan), as the category share metrics of `name`. */
function shareHistory(name: string, scans: ReadonlyArray<Record<string, number>>): MetricHistory {
  const history: MetricHistory = {};
  scans.forEach((shares, i) => {
    const time = `2025-01-${String(i + 1).padStart(2, "0")}T00:00:00.000Z`;
    for (const [value, share] of Object.entries(shares)) {
      const metric = `attr:${name}:value:${value}`;
      history[metric] = [...(history[metric] ?? []), { job_id: `h${i}`, time, value: share, excluded: false }];
    }
  });
  return history;
}

/** Counts of `shares` in n values, the rest spread over `others` small values to make them whole. */
function topValues(shares: Record<string, number>, n: number) {
  return Object.entries(shares)
    .map(([value, share]) => ({ value, count: Math.round(share * n) }))
    .sort((a, b) => b.count - a.count);
}

describe("share rules on real-data shapes", () => {
  it("completeness: a null share that trends up every year is judged from where it is now", () => {
    // A field filled less every year (birdstrikes' speed): 12 % → 31 % missing over 8 yearly batches.
    const history = { "attr:speed:missing_rate": pastPoints([0.12, 0.13, 0.18, 0.22, 0.24, 0.28, 0.29, 0.31]) };
    const speed = (missing: number) =>
      attribute("speed", 900, { inferred_type: "integer", nulls: Math.round(missing * 900), mean: 140 });
    // 25 % of the rows lost their value: 60 % missing. Around the median (23 %) with the spread of
    // the whole trend, the band reached 67 % and this passed.
    const lost = run(speed(0.6), history, "quantity");
    expect(alertKeys(lost)).toEqual(["completeness:speed"]);
    expect(lost.alerts[0]!.description).toMatch(/its recent level 3\d\.\d% over the last 8 scans/);
    // The trend going on as before is no news.
    expect(alertKeys(run(speed(0.34), history, "quantity"))).toEqual([]);
  });

  it("a share that wanders without a trend keeps the band of its median", () => {
    // An airline's yearly share of strikes (birdstrikes 1993-2000): up, down, up. Its steps look
    // calmer than its spread, but not calm enough to be a trend: judged from its last values plus
    // its drift, its band would be 12.3 ± 1.8 points and 7.5 % in 2001 an alert.
    const airline = shareBaseline([0.078, 0.079, 0.088, 0.096, 0.091, 0.118, 0.12, 0.108], 1_095, 3.5);
    expect(airline.wandering).toBe(false);
    expect(airline.centre).toBeCloseTo(0.0935, 4);
    expect(airline.centre - airline.allowed).toBeLessThan(0.075);
    const trend = shareBaseline([0.12, 0.13, 0.18, 0.22, 0.24, 0.28, 0.29, 0.31], 900, 3.5);
    expect(trend.wandering).toBe(true);
    expect(trend.centre).toBeGreaterThan(0.3);
  });

  it("distribution_drift: a category losing a fifth of its share in 10,000 rows fires, under min_shift", () => {
    const r = prng(7);
    const usual = { ORD: 0.056, DFW: 0.05, REST: 0.894 };
    const scans = Array.from({ length: 8 }, () => {
      const ord = usual.ORD + (r() - 0.5) * 0.004;
      return { ORD: ord, DFW: usual.DFW, REST: 1 - ord - usual.DFW };
    });
    const history = shareHistory("origin", scans);
    const origin = (ord: number) => {
      const shares = { ORD: ord, DFW: 0.05, REST: 1 - ord - 0.05 };
      return attribute("origin", 10_000, { distinct: 3, top_values: topValues(shares, 10_000) });
    };
    // 5.6 % → 4.1 %: 1.5 points, far below the 5-point min_shift, 7 standard errors of sampling.
    const dropped = run(origin(0.041), history, "code");
    expect(alertKeys(dropped)).toEqual(["distribution_drift:origin"]);
    expect(dropped.alerts[0]!.values?.map((v) => `${v.value}:${v.change}`)).toContain("ORD:down");
    // 5.3 %: within sampling and the history's own scatter.
    expect(alertKeys(run(origin(0.053), history, "code"))).toEqual([]);
  });

  it("distribution_drift: in a list of the most frequent values only, a value near the cut is not news", () => {
    // 215 airports, the 20 most frequent listed: "DCA" (≈1.6 %) is listed in some scans, not in others.
    const listed = (withDca: boolean) => {
      const shares: Record<string, number> = { ORD: 0.056 };
      for (let i = 0; i < 18; i++) shares[`A${i}`] = 0.03;
      if (withDca) shares.DCA = 0.016;
      else shares.A18 = 0.017;
      return shares;
    };
    const history = shareHistory(
      "origin",
      [false, true, false, false, true, false, false, false].map((dca) => listed(dca)),
    );
    const now = attribute("origin", 10_000, {
      distinct: 215,
      distinct_exact: true,
      top_values: topValues(listed(true), 10_000),
    });
    // Before, the scans that did not list DCA counted as 0 %: "DCA 0.0% -> 1.6%" on clean data.
    expect(alertKeys(run(now, history, "code"))).toEqual([]);
    // A value listed in every scan is still judged: ORD 5.6 % → 3.6 %.
    const dropped = listed(true);
    dropped.ORD = 0.036;
    const moved = attribute("origin", 10_000, { distinct: 215, top_values: topValues(dropped, 10_000) });
    expect(alertKeys(run(moved, history, "code"))).toEqual(["distribution_drift:origin"]);
  });

  it("distribution_drift: a rare value of a long list surging is judged by its count", () => {
    // 61 airports a day in 10,000 flights: a hub with 560, 58 others sharing the rest, a small
    // airport with 2-4 flights a day (TVC) and one seen in two days of eight (SPO). A twentieth of
    // the hub's rows written as the small airport: 32.
    const counts = (tvc: number, spo: number) => {
      const others = 10_000 - 560 - tvc - spo;
      const rest = Array.from({ length: 58 }, (_, i) => ({
        value: `X${String(i).padStart(2, "0")}`,
        count: Math.floor(others / 58) + (i < others % 58 ? 1 : 0),
      }));
      return [{ value: "ORD", count: 560 }, ...rest, { value: "TVC", count: tvc }, { value: "SPO", count: spo }].filter(
        (t) => t.count > 0,
      );
    };
    const past = [2, 3, 3, 4, 4, 4, 4, 2].map((tvc, i) => counts(tvc, i === 2 || i === 6 ? 1 : 0));
    const history = shareHistory(
      "origin",
      past.map((day) => Object.fromEntries(day.map((t) => [t.value, t.count / 10_000]))),
    );
    const airports = (tvc: number, spo = 0, listed = 61) => {
      const top = counts(tvc, spo);
      return attribute("origin", 10_000, { distinct: top.length, top_values: top.slice(0, listed) });
    };
    const surged = run(airports(32), history, "code");
    expect(alertKeys(surged)).toEqual(["distribution_drift:origin"]);
    const [tvc] = surged.alerts[0]!.values!;
    expect(surged.alerts[0]!.values).toHaveLength(1);
    expect(tvc).toMatchObject({ value: "TVC", expected: 0.00035, observed: 0.0032, change: "up", test: "poisson" });
    expect(tvc!.p_value).toBeLessThan(1e-6);
    // The text names the test that fired, with the count it judged, not the G-test of the rest.
    expect(surged.alerts[0]!.description).toMatch(/"TVC" 0\.035% -> 0\.32% \(32 rows, Poisson p = \d\.\de-\d+\)\.$/);
    // Its usual day, and a day at twice its usual count, are no news.
    expect(alertKeys(run(airports(4), history, "code"))).toEqual([]);
    expect(alertKeys(run(airports(7), history, "code"))).toEqual([]);
    // An airport that comes and goes (median 0) with 6 flights is judged from its mean, a row at least.
    expect(alertKeys(run(airports(3, 6), history, "code"))).toEqual([]);
    expect(alertKeys(run(airports(3, 20), history, "code"))).toEqual(["distribution_drift:origin"]);
    // Known by its 20 most frequent values only (a list cut at 20), the small airport is not judged.
    expect(alertKeys(run(airports(32, 0, 20), history, "code"))).toEqual([]);
  });

  it("distribution_drift: values never seen before count against the usual ones in the G-test", () => {
    // A cost that is 0 in 98 % of the rows; noise on a tenth of them gives 60 one-off amounts.
    const history = shareHistory(
      "cost",
      [0.98, 0.981, 0.979, 0.982, 0.98, 0.978, 0.981, 0.98].map((zero) => ({
        "0": zero,
        "5000": (1 - zero) / 2,
        "250": (1 - zero) / 2,
      })),
    );
    const noisy = attribute("cost", 627, {
      inferred_type: "integer",
      distinct: 63,
      top_values: [
        { value: "0", count: 558 },
        { value: "5000", count: 5 },
        { value: "250", count: 4 },
        ...Array.from({ length: 60 }, (_, i) => ({ value: String(1000 + i * 37), count: 1 })),
      ],
    });
    const judged = run(noisy, history, "code");
    expect(alertKeys(judged)).toEqual(["distribution_drift:cost"]);
    expect(judged.alerts[0]!.values![0]).toMatchObject({ value: "0", change: "down" });
  });

  it("distribution_drift: typos scattered over a code of 29 values are news, unless its scans bring as many new values", () => {
    // 29 states in ~900 yearly strikes, each scan listing every state; the shares drift from year to
    // year, so the medians of the shares add up to less than 1 though every scan is complete.
    const r = prng(11);
    const states = Array.from({ length: 29 }, (_, i) => `S${String(i).padStart(2, "0")}`);
    const year = () => {
      const weights = states.map((_, i) => (i + 1) * Math.exp(3 * (r() - 0.5)));
      const sum = weights.reduce((t, w) => t + w, 0);
      return Object.fromEntries(states.map((s, i) => [s, weights[i]! / sum]));
    };
    const fixed = Array.from({ length: 8 }, year);
    const sumOfMedians = states.reduce((t, s) => {
      const xs = fixed.map((y) => y[s]!).sort((a, b) => a - b);
      return t + (xs[3]! + xs[4]!) / 2;
    }, 0);
    expect(sumOfMedians).toBeLessThan(0.99);
    const n = 900;
    const now = topValues(fixed[7]!, n);
    const withTypos = (k: number) => {
      const top = [
        ...now.map((t) => ({ ...t })),
        ...Array.from({ length: k }, (_, i) => ({ value: `Typo${i}`, count: 1 })),
      ];
      top[0]!.count += n - top.reduce((t, v) => t + v.count, 0); // every row listed
      return attribute("state", n, { distinct: top.length, top_values: top });
    };
    const judged = run(withTypos(9), shareHistory("state", fixed), "code");
    expect(alertKeys(judged)).toEqual(["distribution_drift:state"]);
    expect(judged.alerts[0]!.values!.filter((v) => v.change === "new")).toHaveLength(9);
    // A code whose every scan brings a dozen values it never had (a long tail) takes 9 in its stride.
    const tail = fixed.map((y, i) => ({
      ...Object.fromEntries(Object.entries(y).map(([s, v]) => [s, v * 0.98])),
      ...Object.fromEntries(Array.from({ length: 12 }, (_, k) => [`New${i}_${k}`, 0.02 / 12])),
    }));
    expect(alertKeys(run(withTypos(9), shareHistory("state", tail), "code"))).toEqual([]);
  });

  it("distribution_drift: many rows stamped with one moment raise a timestamp's most frequent share", () => {
    const r = prng(3);
    const shares = Array.from({ length: 8 }, () => {
      let k = 0;
      for (let i = 0; i < 10_000; i++) if (r() < 0.015) k++;
      return k / 10_000;
    });
    const history = { "attr:date:top_value_share": pastPoints(shares) };
    const date = (share: number) =>
      attribute("date", 10_000, {
        inferred_type: "timestamp",
        distinct: 900,
        distinct_exact: false,
        top_values: [{ value: "2001-01-09T07:00:00", count: Math.round(share * 10_000) }],
      });
    // 1 % of the rows set to the most frequent moment: 1.5 % → 2.5 %.
    const stamped = run(date(0.025), history, "timestamp");
    expect(alertKeys(stamped)).toEqual(["distribution_drift:date"]);
    expect(stamped.alerts[0]!.description).toMatch(/most frequent value of attribute date \(timestamp\)/);
    expect(alertKeys(run(date(0.016), history, "timestamp"))).toEqual([]);
  });
});
