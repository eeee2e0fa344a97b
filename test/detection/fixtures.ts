/**
 * Test helpers: a seeded random source, an exact in-memory profiler that produces the
 * AssetProfile contract from rows, and a seeded "orders" table whose scans carry small noise and,
 * on request, one real problem.
 */

import type { HistoryPoint } from "../../src/contracts/asset-monitor";
import {
  type AssetProfile,
  type AttributeProfile,
  QUANTILE_POINTS,
  type SchemaField,
  type ValueType,
} from "../../src/contracts/profile";
import type { AttributeKind } from "../../src/db/schema";
import { type AssetRef, type Evaluation, evaluate, type MetricHistory } from "../../src/detection";
import { rememberedSchema, seenSchema } from "../../src/detection/checks/schema";
import { type KnownKind, resolveKinds } from "../../src/detection/kinds";
import { normal, prng } from "../support/random";

export type Cell = string | number | null;
export interface Column {
  name: string;
  type: ValueType;
}

/** Shape class of a value: runs of upper, lower letters and digits become A, a and 9. */
export function shape(v: string): string {
  return v
    .replace(/[A-Z]+/g, "A")
    .replace(/[a-z]+/g, "a")
    .replace(/[0-9]+/g, "9");
}

function quantile(sorted: number[], p: number): number {
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

function topCounts(values: string[], limit: number): Array<{ key: string; count: number }> {
  const counts = new Map<string, number>();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  return [...counts.entries()]
    .map(([key, count]) => ({ key, count }))
    .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : 1))
    .slice(0, limit);
}

/** Profiles rows exactly, as the real profiler's contract describes. */
export function profileRows(
  columns: Column[],
  rows: Array<Record<string, Cell>>,
  opts: { idAttributes?: string[]; timestampAttribute?: string } = {},
): AssetProfile {
  const attributes: AttributeProfile[] = columns.map((c) => {
    const all = rows.map((r) => r[c.name] ?? null);
    const present = all.filter((v): v is string | number => v !== null);
    const numeric = c.type === "integer" || c.type === "number";
    const nums = numeric ? present.filter((v): v is number => typeof v === "number").sort((a, b) => a - b) : [];
    const strings = present.map(String);
    const a: AttributeProfile = {
      name: c.name,
      inferred_type: c.type,
      count: all.length,
      nulls: all.length - present.length,
      empties: present.filter((v) => v === "").length,
      distinct: new Set(strings).size,
      distinct_exact: true,
      top_values: topCounts(strings, 20).map((t) => ({ value: t.key, count: t.count })),
      type_counts: { [c.type]: present.length },
      type_mismatches: numeric ? present.length - nums.length : 0,
      patterns: topCounts(strings.map(shape), 20).map((t) => ({
        pattern: t.key,
        share: t.count / Math.max(1, present.length),
      })),
    };
    if (numeric && nums.length > 0) {
      const mean = nums.reduce((s, v) => s + v, 0) / nums.length;
      a.min = nums[0];
      a.max = nums[nums.length - 1];
      a.mean = mean;
      a.stddev = Math.sqrt(nums.reduce((s, v) => s + (v - mean) ** 2, 0) / nums.length);
      a.quantiles = QUANTILE_POINTS.map((p) => quantile(nums, p));
    } else if (strings.length > 0) {
      const sorted = [...strings].sort();
      a.min = sorted[0];
      a.max = sorted[sorted.length - 1];
      a.mean_length = strings.reduce((s, v) => s + v.length, 0) / strings.length;
    }
    return a;
  });
  const profile: AssetProfile = {
    row_count: rows.length,
    schema: columns.map((c) => ({ name: c.name, type: c.type, nullable: true })),
    attributes,
    sampled: false,
  };
  const ts = opts.timestampAttribute;
  if (ts) {
    const times = rows.map((r) => r[ts]).filter((v): v is string => typeof v === "string" && v !== "");
    if (times.length > 0) profile.freshness = times.sort()[times.length - 1];
  }
  if (opts.idAttributes?.length) {
    const seen = new Set<string>();
    let dup = 0;
    for (const r of rows) {
      const key = JSON.stringify(opts.idAttributes.map((k) => r[k] ?? null));
      if (seen.has(key)) dup++;
      seen.add(key);
    }
    profile.duplicate_count = dup;
  }
  return profile;
}

export const ORDERS: AssetRef = {
  id: 42,
  name: "orders",
  type: "CSV",
  id_attributes: ["id"],
  timestamp_attribute: "updated_at",
};

export const ORDER_COLUMNS: Column[] = [
  { name: "id", type: "integer" },
  { name: "email", type: "string" },
  { name: "country", type: "string" },
  { name: "amount", type: "number" },
  { name: "quantity", type: "integer" },
  { name: "updated_at", type: "timestamp" },
];

export const PROBLEMS = [
  "null_spike",
  "row_drop",
  "dropped_column",
  "duplicate_ids",
  "stale_timestamps",
  "emails_to_text",
  "emails_to_few_phrases",
] as const;
export type Problem = (typeof PROBLEMS)[number];

const COUNTRIES: Array<[string, number]> = [
  ["Germany", 0.3],
  ["France", 0.2],
  ["Spain", 0.15],
  ["Italy", 0.15],
  ["United Kingdom", 0.12],
  ["Netherlands", 0.08],
];

const DAY_MS = 86_400_000;
const START = Date.parse("2025-03-03T06:00:00.000Z");

/** Scan i of the orders table: daily at 06:00 UTC, about 1000 rows, seeded by i. */
export function ordersScan(i: number, problem?: Problem) {
  const r = prng(1000 + i);
  const time = new Date(START + i * DAY_MS).toISOString();
  const scanMs = Date.parse(time);
  // Small bounded noise: ±1 % rows.
  const n = 990 + Math.floor(r() * 21);
  let rows: Array<Record<string, Cell>> = [];
  for (let k = 0; k < n; k++) {
    const id = k + 1;
    let u = r();
    let country = COUNTRIES[0]![0];
    for (const [c, w] of COUNTRIES) {
      if (u < w) {
        country = c;
        break;
      }
      u -= w;
    }
    const email = r() < 0.7 ? `user${id}@example.com` : `first.last${id}@mail.example.org`;
    const amount = r() < 0.02 ? null : Math.round((100 + 15 * normal(r)) * 100) / 100;
    const quantity = 1 + Math.floor(r() * 20);
    const updated = new Date(scanMs - Math.floor(r() * 12 * 3_600_000)).toISOString();
    rows.push({ id, email, country, amount, quantity, updated_at: updated });
  }
  let columns = ORDER_COLUMNS;
  const p = prng(7000 + i);
  switch (problem) {
    case "null_spike":
      for (const row of rows) if (p() < 0.4) row.amount = null;
      break;
    case "row_drop":
      rows = rows.filter(() => p() < 0.4);
      break;
    case "dropped_column":
      columns = ORDER_COLUMNS.filter((c) => c.name !== "quantity");
      for (const row of rows) delete row.quantity;
      break;
    case "duplicate_ids":
      rows.forEach((row, k) => {
        if (k > 0 && p() < 0.05) row.id = 1 + Math.floor(p() * k);
      });
      break;
    case "stale_timestamps":
      for (const row of rows)
        row.updated_at = new Date(Date.parse(row.updated_at as string) - 5 * DAY_MS).toISOString();
      break;
    case "emails_to_text":
      for (const row of rows) row.email = `customer ${row.id} prefers a call after ${1 + Math.floor(p() * 8)} pm`;
      break;
    case "emails_to_few_phrases": {
      const phrases = ["call me", "no email", "ask at the desk", "see notes", "n/a"];
      for (const row of rows) row.email = phrases[Math.floor(p() * phrases.length)]!;
      break;
    }
  }
  const profile = profileRows(columns, rows, { idAttributes: ["id"], timestampAttribute: "updated_at" });
  return { job_id: `job-${i}${problem ? `-${problem}` : ""}`, scan_time: time, profile };
}

/** Past points of one metric, one per day from 2025-01-01, jobs h0, h1, …: a hand-made history. */
export function pastPoints(values: readonly number[]): HistoryPoint[] {
  return values.map((value, i) => ({
    job_id: `h${i}`,
    time: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
    value,
    excluded: false,
  }));
}

/** The kinds of the orders' attributes, as the AssetMonitor settles them from the clean scans. */
export function orderKinds(): Record<string, AttributeKind> {
  const known = resolveKinds(ordersScan(0).profile.attributes, ORDERS, {}, {});
  return Object.fromEntries(Object.entries(known).map(([name, k]) => [name, k.kind]));
}

/** Appends a scan's evaluated points to a history (a copy), as the AssetMonitor would. */
export function record(
  history: MetricHistory,
  scan: { job_id: string; scan_time: string },
  evaluation: Evaluation,
): MetricHistory {
  const next: MetricHistory = Object.fromEntries(Object.entries(history).map(([k, v]) => [k, [...v]]));
  for (const p of evaluation.points) {
    const list = next[p.metric] ?? [];
    list.push({ job_id: scan.job_id, time: scan.scan_time, value: p.value, excluded: p.excluded });
    next[p.metric] = list;
  }
  return next;
}

/** (policy, attribute) of each alert, sorted: what a scenario asserts. */
export function alertKeys(evaluation: Evaluation): string[] {
  return evaluation.alerts.map((a) => `${a.policy}:${a.attribute ?? ""}`).sort();
}

/** Evaluates orders scan i (clean or with a problem) against a history; returns the grown history. */
export function runOrders(
  history: MetricHistory,
  i: number,
  previous: { profile: AssetProfile } | undefined,
  problem?: Problem,
  edit?: (profile: AssetProfile) => void,
) {
  const scan = ordersScan(i, problem);
  edit?.(scan.profile);
  const evaluation = evaluate({
    asset: ORDERS,
    job_id: scan.job_id,
    scan_time: scan.scan_time,
    profile: scan.profile,
    previous_schema: previous?.profile.schema,
    history,
    kinds: orderKinds(),
  });
  return { scan, evaluation, history: record(history, scan, evaluation) };
}

/** n clean scans of the orders table: the history every problem is judged against. */
export function cleanOrders(n: number) {
  let history: MetricHistory = {};
  let previous: ReturnType<typeof ordersScan> | undefined;
  const evaluations: Evaluation[] = [];
  for (let i = 0; i < n; i++) {
    const r = runOrders(history, i, previous);
    evaluations.push(r.evaluation);
    history = r.history;
    previous = r.scan;
  }
  return { history, previous: previous!, evaluations };
}

/**
 * An asset's monitor in process: each profile judged by evaluate() against the history, the kinds
 * and the schema the AssetMonitor keeps (one scan a day), which it then keeps too. `peek` judges a
 * profile without keeping it: a scenario's corrupted batch against the same training.
 */
export class ReplayMonitor {
  history: MetricHistory = {};
  kinds: Record<string, KnownKind> = {};
  schema: SchemaField[] | undefined;
  scans = 0;

  constructor(
    readonly asset: AssetRef,
    private readonly start = Date.parse("2025-01-01T06:00:00.000Z"),
  ) {}

  /** Judges the next scan and keeps it. */
  judge(profile: AssetProfile): Evaluation {
    const { evaluation, kinds, job } = this.peek(profile);
    this.history = record(this.history, job, evaluation);
    this.kinds = kinds;
    this.schema = rememberedSchema(this.schema, seenSchema(profile));
    this.scans += 1;
    return evaluation;
  }

  /** Judges the next scan without keeping it. */
  peek(profile: AssetProfile) {
    const job = { job_id: `replay-${this.scans}`, scan_time: new Date(this.start + this.scans * DAY_MS).toISOString() };
    const kinds = resolveKinds(profile.attributes, this.asset, this.kinds, {});
    const evaluation = evaluate({
      asset: this.asset,
      ...job,
      profile,
      previous_schema: this.schema,
      history: this.history,
      kinds: Object.fromEntries(Object.entries(kinds).map(([name, k]) => [name, k.kind])),
    });
    return { evaluation, kinds, job };
  }
}
