/**
 * What the investigator needs from a file scan, collected in the same pass: for each attribute with
 * few distinct values (codes, booleans, short strings — a "breakdown attribute"), per value, the
 * rows that hold it and how many of those rows miss each other attribute (null or empty). From
 * these counts the monitor says where the missing values of an alerting attribute sit
 * ("92 % of the missing email values come from country = DE, which holds 12 % of the rows").
 *
 * Bounded: an attribute is a breakdown attribute until it shows more than MAX_BREAKDOWN_VALUES
 * distinct values or a value longer than MAX_BREAKDOWN_VALUE_CHARS (then it is dropped for the
 * rest of the scan); at most MAX_BREAKDOWN_ATTRIBUTES are followed at once, and missing counts are
 * kept for at most MAX_BREAKDOWN_TARGETS attributes. Memory stays below
 * attributes × values × targets counters (12 × 20 × 200 at most).
 *
 * Rows come one by one (`add`) or as a batch of columns (`addColumn` per column, then `endColumns`),
 * where each column brings the codes the attribute's profile gave its values (attribute-stats
 * ColumnCodes): a breakdown value is looked up once per distinct value of the batch, not per row,
 * and only the rows missing a value are walked. In a batch every column is an attribute of every
 * row; attributes are taken on as breakdown attributes or targets column by column.
 */

import type { ColumnCodes } from "./column-codes";

/** Distinct values past which an attribute does not break the data down usefully. */
export const MAX_BREAKDOWN_VALUES = 20;
/** Longer values are text, not codes. */
export const MAX_BREAKDOWN_VALUE_CHARS = 64;
/** Breakdown attributes followed at once. */
export const MAX_BREAKDOWN_ATTRIBUTES = 12;
/** Attributes whose missing values are counted per breakdown value. */
export const MAX_BREAKDOWN_TARGETS = 200;

/** One breakdown attribute of a profile: its rows, and per value the rows and missing counts. */
export interface BreakdownProfile {
  attribute: string;
  /** Rows in which the attribute held a value (it is followed from its first value on). */
  rows: number;
  /** Of those rows, how many miss each other attribute. */
  missing: Record<string, number>;
  values: Array<{ value: string; rows: number; missing: Record<string, number> }>;
}

interface Cell {
  rows: number;
  missing: Map<string, number>;
  /** Missing values counted in the batch, not yet in `missing`. */
  pending: number;
}

interface Candidate {
  rows: number;
  missing: Map<string, number>;
  values: Map<string, Cell>;
}

const isMissing = (v: unknown) => v === null || v === undefined || v === "";

/** The text a value is broken down by. */
const keyOf = (v: unknown): string => (typeof v === "string" ? v : v instanceof Date ? v.toISOString() : String(v));

/** A breakdown attribute's column in the current batch: per row its cell, or null where missing. */
interface BatchCandidate {
  candidate: Candidate;
  cells: Array<Cell | null>;
}

function add(map: Map<string, number>, key: string, count: number): void {
  map.set(key, (map.get(key) ?? 0) + count);
}

export class Breakdown {
  private readonly candidates = new Map<string, Candidate>();
  /** Attributes found unfit (too many or too long values): never followed again. */
  private readonly dropped = new Set<string>();
  private readonly targets = new Set<string>();
  private readonly missingNow: string[] = [];
  /** The batch in progress (addColumn … endColumns). */
  private batchCandidates: BatchCandidate[] = [];
  private batchMissing: Array<{ target: string; rows: Int32Array; count: number }> = [];

  /** Counts one profiled row. */
  add(row: Record<string, unknown>): void {
    const missing = this.missingNow;
    missing.length = 0;
    for (const key in row) {
      if (!isMissing(row[key])) continue;
      if (this.targets.has(key) || this.targets.size < MAX_BREAKDOWN_TARGETS) {
        this.targets.add(key);
        missing.push(key);
      }
    }
    for (const key in row) {
      const v = row[key];
      if (isMissing(v) || this.dropped.has(key)) continue;
      let candidate = this.candidates.get(key);
      if (candidate === undefined) {
        if (this.candidates.size >= MAX_BREAKDOWN_ATTRIBUTES) continue;
        candidate = { rows: 0, missing: new Map(), values: new Map() };
        this.candidates.set(key, candidate);
      }
      const cell = this.cellFor(key, candidate, v);
      if (cell === null) continue;
      candidate.rows++;
      cell.rows++;
      for (let i = 0; i < missing.length; i++) {
        add(candidate.missing, missing[i]!, 1);
        add(cell.missing, missing[i]!, 1);
      }
    }
  }

  /**
   * Counts one column of a batch of `n` rows; `codes` are what the attribute's profile found in
   * it (valid for this call only). The batch is counted by endColumns().
   */
  addColumn(name: string, values: ArrayLike<unknown>, n: number, codes: ColumnCodes): void {
    const { codes: code, firsts, counts, distinct } = codes;
    // The distinct value "" is missing as null is (at most one distinct value is "").
    let empty = -1;
    for (let d = 0; d < distinct; d++) {
      if (values[firsts[d]!] === "") {
        empty = d;
        break;
      }
    }
    let missingRows = 0;
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      if (d === -1 || d === empty) missingRows++;
    }
    if (missingRows > 0 && (this.targets.has(name) || this.targets.size < MAX_BREAKDOWN_TARGETS)) {
      this.targets.add(name);
      const rows = new Int32Array(missingRows);
      let m = 0;
      for (let i = 0; i < n; i++) {
        const d = code[i]!;
        if (d === -1 || d === empty) rows[m++] = i;
      }
      this.batchMissing.push({ target: name, rows, count: m });
    }
    if (missingRows === n || this.dropped.has(name)) return;
    let candidate = this.candidates.get(name);
    if (candidate === undefined) {
      if (this.candidates.size >= MAX_BREAKDOWN_ATTRIBUTES) return;
      candidate = { rows: 0, missing: new Map(), values: new Map() };
      this.candidates.set(name, candidate);
    }
    // One cell per distinct value of the batch, in order of first appearance.
    const byCode: Array<Cell | null> = new Array(distinct);
    for (let d = 0; d < distinct; d++) {
      if (d === empty) {
        byCode[d] = null;
        continue;
      }
      const cell = this.cellFor(name, candidate, values[firsts[d]!]);
      if (cell === null) return;
      byCode[d] = cell;
      cell.rows += counts[d]!;
      candidate.rows += counts[d]!;
    }
    const cells: Array<Cell | null> = new Array(n);
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      if (d >= 0) cells[i] = byCode[d]!;
      else if (d === -1) cells[i] = null;
      else {
        // A nested or binary value: its own key.
        const cell = this.cellFor(name, candidate, values[i]);
        if (cell === null) return;
        cell.rows++;
        candidate.rows++;
        cells[i] = cell;
      }
    }
    this.batchCandidates.push({ candidate, cells });
  }

  /** Counts the missing values of the batch given by addColumn, and ends it. */
  endColumns(): void {
    const candidates = this.batchCandidates;
    for (const { target, rows, count } of this.batchMissing) {
      for (const { candidate, cells } of candidates) {
        // Per cell first (a plain field), then one map update per cell.
        let total = 0;
        for (let m = 0; m < count; m++) {
          const cell = cells[rows[m]!];
          if (cell === null || cell === undefined) continue;
          cell.pending++;
          total++;
        }
        if (total === 0) continue;
        add(candidate.missing, target, total);
        for (const cell of candidate.values.values()) {
          if (cell.pending === 0) continue;
          add(cell.missing, target, cell.pending);
          cell.pending = 0;
        }
      }
    }
    this.batchCandidates = [];
    this.batchMissing = [];
  }

  /** The cell of value v of a breakdown attribute; null when v drops the attribute (too many or too long values). */
  private cellFor(name: string, candidate: Candidate, v: unknown): Cell | null {
    const value = keyOf(v);
    let cell = candidate.values.get(value);
    if (cell === undefined) {
      if (candidate.values.size >= MAX_BREAKDOWN_VALUES || value.length > MAX_BREAKDOWN_VALUE_CHARS) {
        this.candidates.delete(name);
        this.dropped.add(name);
        return null;
      }
      cell = { rows: 0, missing: new Map(), pending: 0 };
      candidate.values.set(value, cell);
    }
    return cell;
  }

  /** The breakdown attributes that split the rows (two values or more), by name. */
  finish(): BreakdownProfile[] {
    const out: BreakdownProfile[] = [];
    for (const [attribute, c] of this.candidates) {
      if (c.values.size < 2) continue;
      out.push({
        attribute,
        rows: c.rows,
        missing: Object.fromEntries(c.missing),
        values: [...c.values].map(([value, cell]) => ({
          value,
          rows: cell.rows,
          missing: Object.fromEntries(cell.missing),
        })),
      });
    }
    return out.sort((a, b) => (a.attribute < b.attribute ? -1 : a.attribute > b.attribute ? 1 : 0));
  }
}
