/**
 * The category rules that distribution_drift (of codes: new, vanished and moved categories) and
 * pattern_drift (the same rules over value shapes) share.
 *
 * A category is judged by its count, not its share alone:
 * - new: a value never seen in the training window, with at least `min_count` rows and
 *   `min_share` of the values beyond the largest share of new values a scan of the window brought
 *   (only when this scan and every scan of the baseline list every value: up to MAX_LISTED_VALUES);
 *   or more never-seen values, each too rare to count, than any scan of the window brought, that
 *   together reach `min_count` and `min_share` (typos, broken characters scattered over a code);
 * - vanished: a value that had at least `vanish_share` in the baseline, absent now;
 * - moved: the shares differ by a G-test (p below `alpha`, row count aware; values below
 *   `min_share` both before and now pooled in one cell), and a value's share moved by at least
 *   `min_shift` and beyond what sampling this scan's values and the history's own drift (its
 *   spread beyond sampling) explain;
 * - surged: a rare value (below `min_share` in the baseline) whose count is beyond its usual count
 *   plus the history's drift by a Poisson test at `alpha`, by `min_count` rows at least, when every
 *   value is listed now and was in the baseline (a small airport with 3 flights a day getting 32):
 *   attributes of up to MAX_LISTED_VALUES values list them all, so their rare values are watched.
 * The values that moved are named in the alert (`values`).
 *
 * Sampling is not the only reason shares differ between clean scans: real batches (a year of
 * birdstrikes) move their shares several times as far as their row counts alone would, and a
 * baseline of a few scans knows its centre only roughly. The first widens what a moved share is
 * allowed, the second that and the G-test too (see `historySpread`), so a short history of a lively
 * code cries no wolf, while a history that varies only as samples do keeps the row count's power.
 */
import type { AttributeProfile } from "../../contracts/profile";
import { shareBaseline } from "../anomaly";
import { type ComponentBaseline, componentBaseline } from "../divergence";
import { attrMetric, escapeName, listsEveryValue, nonNull, unescapeName, valuePrefix } from "../metrics";
import type { DriftParams } from "../params";
import { chiSquareTail, countDispersion, gStatistic, poissonTail } from "../stats";
import type { MetricHistory, MovedValue } from "../types";
import {
  assetName,
  type CheckContext,
  type CheckResult,
  type Finding,
  pct,
  pText,
  round,
  SPREAD_Z,
  trainingWindow,
} from "./common";

type ShareParams = DriftParams;

/** New values listed in an alert when many rare ones appear at once (the text counts the rest). */
const MAX_SCATTERED_LISTED = 20;

export interface ShareJudgement {
  moved: MovedValue[];
  /** How far the largest move went, in units of its allowed move. */
  deviation: number;
  p: number;
  scans: number;
  /** Never-seen values each too rare to count that together are new (typos): how many, and their share. */
  scattered?: { values: number; share: number };
  from?: string;
  to?: string;
}

/** Whether every scan of a baseline listed every value: its shares add up to 1 in each. */
function listedEveryValue(series: ReadonlyMap<string, readonly number[]>, scans: number): boolean {
  if (scans === 0) return false;
  for (let i = 0; i < scans; i++) {
    let sum = 0;
    for (const xs of series.values()) sum += xs[i] ?? 0;
    if (sum < 0.99) return false;
  }
  return true;
}

/** Scans at the start of a window whose values are all new to it, left out of its novelty. */
const NOVELTY_WARMUP = 2;

/**
 * The most values never seen earlier in the window that one of its scans brought, and the largest
 * share they had (from its third scan on): none for a code with a fixed set of values, some for a
 * code with a long tail that keeps taking new values (airlines that strike a bird once).
 */
function novelty(series: ReadonlyMap<string, readonly number[]>, scans: number): { values: number; share: number } {
  // Per scan, the values whose first appearance in the window it is, and their share.
  const values = new Array<number>(scans).fill(0);
  const shares = new Array<number>(scans).fill(0);
  for (const xs of series.values()) {
    const first = xs.findIndex((v) => v > 0);
    if (first < NOVELTY_WARMUP || first >= scans) continue;
    values[first]!++;
    shares[first]! += xs[first]!;
  }
  return { values: Math.max(0, ...values), share: Math.max(0, ...shares) };
}

/** The variance of the median of T values, in units of one value's variance over T (π/2 for a normal sample). */
const MEDIAN_VARIANCE = Math.PI / 2;

/**
 * How much wider than one scan's sampling the differences between this scan's shares and the
 * baseline's are, as factors of the binomial variance at this scan's row count:
 * - `phi`: the dispersion of the baseline's scans (stats.ts countDispersion, over the values every
 *   scan measured and the rest pooled, cells of min_share and more), 1 at least: how many times
 *   the binomial variance the shares vary between clean scans. Pooled over the values, it is
 *   estimated from (scans − 1)(values − 1) degrees of freedom, where each value's own spread has
 *   only scans − 1;
 * - `centre`: 1 plus the variance of the baseline's centre (a median of T scans of n_t values each)
 *   relative to this scan's sampling: a centre from 7 scans is itself ~1/5 of a scan uncertain.
 */
function historySpread(
  history: MetricHistory,
  base: ComponentBaseline,
  sizesMetric: string,
  total: number,
  everyValue: boolean,
  minShare: number,
): { phi: number; centre: number } {
  const byJob = new Map((history[sizesMetric] ?? []).map((h) => [h.job_id, h.value]));
  const sizes = base.jobs.map(({ job }) => {
    const n = byJob.get(job);
    return n !== undefined && n > 0 ? n : total;
  });
  const scans = sizes.length;
  if (scans === 0) return { phi: 1, centre: 1 };
  const centre = 1 + (MEDIAN_VARIANCE * total * sizes.reduce((s, n) => s + 1 / n, 0)) / (scans * scans);
  const all = sizes.reduce((s, n) => s + n, 0);
  const table = sizes.map(() => [] as number[]);
  const listed = sizes.map(() => 0);
  for (const xs of base.series.values()) {
    // A value not listed in a scan of a top list had a share below the list's cut, not none.
    if (xs.length !== scans || (!everyValue && xs.some((v) => v === 0))) continue;
    const counts = xs.map((x, t) => x * sizes[t]!);
    if (counts.reduce((s, c) => s + c, 0) < minShare * all) continue;
    for (const [t, c] of counts.entries()) {
      table[t]!.push(c);
      listed[t]! += c;
    }
  }
  const rest = sizes.map((n, t) => Math.max(0, n - listed[t]!));
  if (rest.reduce((s, c) => s + c, 0) >= minShare * all) for (const [t, c] of rest.entries()) table[t]!.push(c);
  return { phi: Math.max(1, countDispersion(table).phi), centre };
}

/**
 * Compares this scan's parts (value → count) with the baseline of the parts under `prefix`.
 * `complete` says whether the parts are every value, with its exact count (new and vanished
 * values and rare values' surges are judged then).
 */
export function judgeShares(
  ctx: CheckContext,
  prefix: string,
  counts: ReadonlyMap<string, number>,
  total: number,
  complete: boolean,
  p: ShareParams,
  newAllowed: boolean,
  sizesMetric: string,
): ShareJudgement | { training: number } | undefined {
  const base = componentBaseline(ctx.history, { prefix }, ctx.input.job_id, p.window, 0);
  if (base.scans < p.min_history) return { training: base.scans };
  if (total < p.min_values) return undefined;
  const baseComplete = listedEveryValue(base.series, base.scans);
  const spread = historySpread(ctx.history, base, sizesMetric, total, complete && baseComplete, p.min_share);
  const novel = baseComplete ? novelty(base.series, base.scans) : { values: 0, share: 0 };
  const names = [...new Set([...base.values.keys(), ...counts.keys()])].sort();
  const observed: number[] = [];
  const expected: number[] = [];
  const moved: MovedValue[] = [];
  // Rare values whose counts surged: judged by their own count test, not the G-test.
  const surged: MovedValue[] = [];
  // Never-seen values each too rare to be a category, which together are (typos, broken characters).
  const scattered: MovedValue[] = [];
  let scatteredCount = 0;
  let deviation = 0;
  for (const name of names) {
    const count = counts.get(name) ?? 0;
    const share = count / total;
    const usual = base.values.get(name) ?? 0;
    const series = base.series.get(name) ?? [];
    const seen = series.some((v) => v > 0);
    if (seen && (usual >= p.min_share || share >= p.min_share)) {
      observed.push(count);
      expected.push(usual);
    }
    const value = unescapeName(name);
    if (!seen) {
      if (newAllowed && complete && baseComplete && count > 0) {
        if (count >= p.min_count && share >= p.min_share + novel.share) {
          moved.push({ value, expected: 0, observed: round(share), change: "new" });
          deviation = Math.max(deviation, share / p.min_share);
        } else {
          scattered.push({ value, expected: 0, observed: round(share), change: "new" });
          scatteredCount += count;
        }
      }
      continue;
    }
    if (count === 0 && complete && usual >= p.vanish_share) {
      moved.push({ value, expected: round(usual), observed: 0, change: "vanished" });
      deviation = Math.max(deviation, usual / p.vanish_share);
      continue;
    }
    // The history's level of the value and its drift beyond sampling.
    const level = series.length > 0 ? shareBaseline(series, total, SPREAD_Z) : { centre: usual, allowed: 0 };
    const from = level.centre;
    if (complete && baseComplete && from < p.min_share) {
      // Its usual count at the top of the history's drift, and the chance of this many or more.
      const high = (from + level.allowed) * total;
      const tail = count - high >= p.min_count ? poissonTail(count, high) : 1;
      if (tail < p.alpha) {
        surged.push({
          value,
          expected: round(from),
          observed: round(share),
          change: "up",
          test: "poisson",
          p_value: round(tail),
        });
        deviation = Math.max(deviation, count / Math.max(high, p.min_count));
      }
      continue;
    }
    // In a list of the most frequent values only, a value not listed had a share below the list's
    // cut, not none: its moves are judged only when every scan listed it.
    if (!(complete && baseComplete) && (count === 0 || series.length < base.scans || series.some((v) => v === 0))) {
      continue;
    }
    // Sampling of this scan's values (binomial) and the history's drift beyond sampling, and an
    // effect floor: min_shift points, or for a smaller category min_rel_shift of its share.
    // The centre's own uncertainty widens both; the history's dispersion, pooled over its values,
    // bounds the band from below where this value's own few points showed less.
    const mid = (from + share) / 2;
    const sampling = SPREAD_Z * Math.sqrt((spread.centre * mid * (1 - mid)) / total);
    const floor = Math.min(p.min_shift, Math.max(p.min_share, p.min_rel_shift * Math.max(from, share)));
    const allowed = Math.max(floor, sampling * Math.sqrt(spread.phi), Math.hypot(sampling, level.allowed));
    if (Math.abs(share - from) > allowed) {
      moved.push({ value, expected: round(from), observed: round(share), change: share > from ? "up" : "down" });
      deviation = Math.max(deviation, Math.abs(share - from) / allowed);
    }
  }
  const scatteredNew =
    scatteredCount >= p.min_count && scatteredCount / total >= p.min_share && scattered.length > novel.values;
  if (scatteredNew) {
    scattered.sort((u, v) => v.observed - u.observed);
    moved.push(...scattered.slice(0, MAX_SCATTERED_LISTED));
    deviation = Math.max(deviation, scatteredCount / total / p.min_share);
  }
  // The rest (the pooled values, and those not listed when the lists are not complete): one more
  // part, expected at half a row at least, so values never seen before weigh in the test.
  const listed = observed.reduce((s, v) => s + v, 0);
  observed.push(Math.max(0, total - listed));
  expected.push(Math.max(0.5 / total, 1 - expected.reduce((s, v) => s + v, 0)));
  // The expected shares are the baseline's, known only as well as its centre: the G statistic in
  // units of that. (The history's dispersion widens each value's band above, not this test: the
  // test says the shares differ, the bands say which moved beyond the column's own spread.)
  const { g, df } = gStatistic(observed, expected);
  const pValue = chiSquareTail(g / spread.centre, df);
  // A shift must also be more than the row count explains (the G-test); new and vanished values
  // speak for themselves, and rare values' surges passed their own test.
  const kept: MovedValue[] = [...surged];
  for (const m of moved) {
    if (m.change !== "up" && m.change !== "down") kept.push(m);
    else if (pValue < p.alpha) kept.push({ ...m, test: "g_test", p_value: round(pValue) });
  }
  if (kept.length === 0) return { moved: [], deviation: 0, p: pValue, scans: base.scans };
  kept.sort((u, v) => Math.abs(v.observed - v.expected) - Math.abs(u.observed - u.expected));
  return {
    moved: kept,
    deviation,
    p: pValue,
    scans: base.scans,
    ...(scatteredNew ? { scattered: { values: scattered.length, share: scatteredCount / total } } : {}),
    from: base.from,
    to: base.to,
  };
}

/** The moved values an alert names in its text; the rest are counted. */
const MAX_SHOWN = 5;

/** The moved values in words, each with what found it; the G-test, shared by the shares it moved, once at the end. */
export function movedText(judged: ShareJudgement, total: number): string {
  const { moved } = judged;
  const shown = moved.slice(0, MAX_SHOWN).map((m) => {
    const name = `"${m.value}"`;
    switch (m.change) {
      case "new":
        return `new ${name} at ${pct(m.observed)}`;
      case "vanished":
        return `${name} gone (was ${pct(m.expected)})`;
      default: {
        const move = `${name} ${pct(m.expected)} -> ${pct(m.observed)}`;
        // A rare value's count: the text gives its rows, since its shares alone read as nothing.
        return m.test === "poisson"
          ? `${move} (${Math.round(m.observed * total)} rows, Poisson ${pText(m.p_value!)})`
          : move;
      }
    }
  });
  const more = moved.length > shown.length ? ` and ${moved.length - shown.length} more` : "";
  const notes: string[] = [];
  if (moved.slice(0, MAX_SHOWN).some((m) => m.test === "g_test")) {
    notes.push(`shares moved: G-test ${pText(judged.p)} on ${total} values`);
  }
  if (judged.scattered && moved.slice(0, MAX_SHOWN).some((m) => m.change === "new")) {
    const { values, share } = judged.scattered;
    notes.push(`${values} never-seen values, ${pct(share)} together`);
  } else if (moved.slice(0, MAX_SHOWN).some((m) => m.change === "new")) {
    notes.push(`never seen in the last ${judged.scans} scans`);
  }
  return `${shown.join(", ")}${more}${notes.length ? ` (${notes.join("; ")})` : ""}`;
}

export const counted = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;

export function codeDrift(
  ctx: CheckContext,
  p: ShareParams,
  a: AttributeProfile,
): { finding?: Finding; training?: CheckResult["training"][number] } {
  const metric = attrMetric(a.name, "category_shares");
  const counts = new Map(a.top_values.map((t) => [escapeName(t.value), t.count]));
  const judged = judgeShares(
    ctx,
    valuePrefix(a.name),
    counts,
    nonNull(a),
    listsEveryValue(a),
    p,
    true,
    attrMetric(a.name, "non_null"),
  );
  if (!judged) return {};
  if ("training" in judged)
    return { training: { metric, attribute: a.name, points: judged.training, needed: p.min_history } };
  if (judged.moved.length === 0) return {};
  return {
    finding: {
      attribute: a.name,
      metric,
      observed: judged.moved.length,
      metric_value: movedText(judged, nonNull(a)),
      expected: `the category shares of the last ${judged.scans} scans`,
      description: `The categories of attribute ${a.name} (code) in ${assetName(ctx)} changed from its baseline of the last ${judged.scans} scans, ${counted(judged.moved.length, "value")}: ${movedText(judged, nonNull(a))}.`,
      strategy: "category_shares",
      training_size: judged.scans,
      ...trainingWindow(judged.from, judged.to),
      values: judged.moved,
      deviation: judged.deviation,
      adaptable: true,
      exclude: [...counts.keys()].map((v) => `${valuePrefix(a.name)}${v}`),
    },
  };
}
