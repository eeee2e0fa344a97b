/**
 * What the investigator needs from a file scan, collected in the same pass: for each attribute with
 * few distinct values (codes, booleans, short strings — a "breakdown attribute"), per value, the
 * rows that hold it and, of those rows, per other attribute ("target"):
 *
 * - how many miss it (null or empty): where the missing values of a completeness alert sit;
 * - how many hold a value not of the target's type: where a type_mismatch alert's values sit;
 * - for numeric targets, the count, mean and variance of its values: which values moved a
 *   quantity (the monitor keeps each value's mean in the asset's history and compares);
 * - for text targets with few shapes (codes, identifiers; not free text), its rows by shape:
 *   where the values of a new or rising pattern sit;
 *
 * and how many of its rows repeat an earlier row, whole or by id (the builder says which rows).
 *
 * Bounded: an attribute is a breakdown attribute until it shows more than MAX_BREAKDOWN_VALUES
 * distinct values or a value longer than MAX_BREAKDOWN_VALUE_CHARS (then it is dropped for the
 * rest of the scan); at most MAX_BREAKDOWN_ATTRIBUTES are followed at once; missing and type
 * counts are kept for at most MAX_BREAKDOWN_TARGETS attributes, sums for at most
 * MAX_BREAKDOWN_NUMERIC numeric ones. Memory stays below attributes × values × targets counters
 * (12 × 20 × 200 at most).
 *
 * Rows come as a batch of columns (`addColumn` per column, then `endColumns`), where each column
 * brings what the attribute's profile found in it (attribute-stats ColumnCodes): a breakdown
 * value is looked up once per distinct value of the batch, not per row. Only the rows missing a
 * value or holding a value of another type than the target's usual one (its "home" type, the most
 * frequent in the first batch that had values) are walked one by one; numeric targets are
 * summed row by row per breakdown attribute. The home type's rows of a value are what its rows
 * leave once its missing and other-typed rows are counted, so a target's type counts are exact
 * whatever type the scan finally judges it by. In a batch every column is an attribute of every
 * row (a row without the attribute misses it, as the profile counts it).
 */

import type { BreakdownProfile, BreakdownValue, NumericSummary } from "../../contracts/profile";
import type { ColumnCodes } from "./column-codes";
import { ownString } from "./own-string";
import { T_EMPTY, T_INTEGER, T_NUMBER, T_STRING } from "./value-types";

/** Distinct values past which an attribute does not break the data down usefully. */
export const MAX_BREAKDOWN_VALUES = 20;
/** Longer values are text, not codes. */
export const MAX_BREAKDOWN_VALUE_CHARS = 64;
/** Breakdown attributes followed at once. */
export const MAX_BREAKDOWN_ATTRIBUTES = 12;
/** Attributes whose missing values and types are counted per breakdown value. */
export const MAX_BREAKDOWN_TARGETS = 200;
/** Numeric attributes whose values are summed per breakdown value. */
export const MAX_BREAKDOWN_NUMERIC = 16;
/**
 * Shapes of a text attribute other than its usual one that are counted per breakdown value; an
 * attribute showing more (free text) is no longer followed by shape.
 */
export const MAX_BREAKDOWN_SHAPES = 8;

/** Type codes counted per target: T_INTEGER … T_STRING. */
const TYPE_CODES = T_STRING + 1;

interface Cell {
  rows: number;
  missing: Map<string, number>;
  /** Missing values counted in the batch, not yet in `missing`. */
  pending: number;
  /** Per target: rows by type code, for the rows not of the target's home type. */
  otherTypes: Map<string, Float64Array> | null;
  /** Per numeric slot k: count, Σ(x − shift), Σ(x − shift)² at 3k, 3k + 1, 3k + 2. */
  sums: Float64Array | null;
  /** Rows repeating an earlier row, whole or by id. */
  duplicate_rows: number;
  duplicate_ids: number;
  /** Per text target: rows by shape, for the text rows not of the target's home shape. */
  otherShapes: Map<string, Map<string, number>> | null;
}

/** What repeats: whole rows, or id tuples. */
export type DuplicateKind = "duplicate_rows" | "duplicate_ids";

interface Candidate {
  rows: number;
  missing: Map<string, number>;
  values: Map<string, Cell>;
}

/** A target attribute: its home type (-1 until it had values) and numeric slot (-1: none). */
interface Target {
  home: number;
  slot: number;
  /** Subtracted from its values before summing (its first number), for stable variances. */
  shift: number;
  /**
   * Text targets: the most frequent shape of the first batch, and the other shapes seen (at most
   * MAX_BREAKDOWN_SHAPES; null once it had more, and is no longer followed by shape).
   */
  homeShape: string | undefined;
  otherShapes: Set<string> | null;
}

/** The text a value is broken down by (a Date's ISO text; an invalid Date's "Invalid Date"). */
const keyOf = (v: unknown): string =>
  typeof v === "string" ? v : v instanceof Date && !Number.isNaN(v.getTime()) ? v.toISOString() : String(v);

/** A value of a column as the profile took it: a timestamp column's numbers are instants (ColumnCodes.timestamps). */
const asTaken = (v: unknown, codes: ColumnCodes): unknown =>
  codes.timestamps && typeof v === "number" ? new Date(v) : v;

/** A breakdown attribute's column in the current batch: per row its cell, or null where missing. */
interface BatchCandidate {
  name: string;
  candidate: Candidate;
  cells: Array<Cell | null>;
}

function add(map: Map<string, number>, key: string, count: number): void {
  map.set(key, (map.get(key) ?? 0) + count);
}

/** A cell's rows holding a value of `target`'s home type: what its missing and other-typed rows leave. */
function homeTypeRows(cell: Cell, target: string): number {
  let rows = cell.rows - (cell.missing.get(target) ?? 0);
  const byType = cell.otherTypes?.get(target);
  if (byType !== undefined) for (let t = 0; t < TYPE_CODES; t++) rows -= byType[t]!;
  return rows;
}

function newCell(): Cell {
  return {
    rows: 0,
    missing: new Map(),
    pending: 0,
    otherTypes: null,
    sums: null,
    duplicate_rows: 0,
    duplicate_ids: 0,
    otherShapes: null,
  };
}

export class Breakdown {
  private readonly candidates = new Map<string, Candidate>();
  /** Attributes found unfit (too many or too long values): never followed again. */
  private readonly dropped = new Set<string>();
  private readonly targets = new Map<string, Target>();
  private numericSlots = 0;
  /** The batch in progress (addColumn … endColumns). */
  private batchCandidates: BatchCandidate[] = [];
  private batchMissing: Array<{ target: string; rows: Int32Array; count: number }> = [];
  private batchOtherTypes: Array<{ target: string; rows: Int32Array; types: Uint8Array; count: number }> = [];
  private batchNumbers: Array<{ target: string; slot: number; values: Float64Array }> = [];
  private batchDuplicates: Array<{ kind: DuplicateKind; rows: Int32Array }> = [];
  private batchShapes: Array<{ target: string; rows: Int32Array; shapes: string[]; weight: number }> = [];

  /**
   * Counts one column of a batch of `n` rows; `codes` are what the attribute's profile found in
   * it (valid for this call only). The batch is counted by endColumns().
   */
  addColumn(name: string, values: ArrayLike<unknown>, n: number, codes: ColumnCodes): void {
    const { codes: code, counts, distinct, types } = codes;
    // The distinct value "" (or blank text) is missing as null is.
    let missingRows = 0;
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      if (d === -1 || (d >= 0 && types[d] === T_EMPTY)) missingRows++;
    }
    const target = this.targetFor(name);
    if (target !== undefined) {
      if (missingRows > 0) this.collectMissing(name, code, types, n, missingRows);
      if (missingRows < n) this.collectTypes(name, target, codes, n);
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
      if (types[d] === T_EMPTY) {
        byCode[d] = null;
        continue;
      }
      const cell = this.cellFor(name, candidate, asTaken(values[codes.firsts[d]!], codes));
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
        const cell = this.cellFor(name, candidate, asTaken(values[i], codes));
        if (cell === null) return;
        cell.rows++;
        candidate.rows++;
        cells[i] = cell;
      }
    }
    this.batchCandidates.push({ name, candidate, cells });
  }

  /** The target state of an attribute, taken on while there is room. */
  private targetFor(name: string): Target | undefined {
    let target = this.targets.get(name);
    if (target === undefined && this.targets.size < MAX_BREAKDOWN_TARGETS) {
      target = { home: -1, slot: -1, shift: 0, homeShape: undefined, otherShapes: new Set() };
      this.targets.set(name, target);
    }
    return target;
  }

  private collectMissing(name: string, code: Int32Array, types: Uint8Array, n: number, count: number): void {
    const rows = new Int32Array(count);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      if (d === -1 || (d >= 0 && types[d] === T_EMPTY)) rows[m++] = i;
    }
    this.batchMissing.push({ target: name, rows, count: m });
  }

  /** The rows of other types than the target's home type, and a numeric target's values. */
  private collectTypes(name: string, target: Target, codes: ColumnCodes, n: number): void {
    const { codes: code, counts, distinct, types, numbers } = codes;
    if (target.home === -1) {
      const byType = new Float64Array(TYPE_CODES);
      for (let d = 0; d < distinct; d++) if (types[d]! < TYPE_CODES) byType[types[d]!]! += counts[d]!;
      let home = T_STRING;
      for (let t = 0; t < TYPE_CODES; t++) if (byType[t]! > byType[home]!) home = t;
      target.home = home;
    }
    const home = target.home;
    // A nested or binary value (code -2) is profiled as text.
    let others = 0;
    for (let d = 0; d < distinct; d++) if (types[d] !== home && types[d] !== T_EMPTY) others += counts[d]!;
    if (home !== T_STRING) for (let i = 0; i < n; i++) if (code[i] === -2) others++;
    if (others > 0) {
      const rows = new Int32Array(others);
      const rowTypes = new Uint8Array(others);
      let m = 0;
      for (let i = 0; i < n; i++) {
        const d = code[i]!;
        const t = d >= 0 ? types[d]! : d === -2 ? T_STRING : home;
        if (t === home || t === T_EMPTY) continue;
        rows[m] = i;
        rowTypes[m++] = t;
      }
      this.batchOtherTypes.push({ target: name, rows, types: rowTypes, count: m });
    }
    if (home === T_STRING) this.collectShapes(name, target, codes, n);
    if (home !== T_INTEGER && home !== T_NUMBER) return;
    if (target.slot === -1) {
      if (this.numericSlots >= MAX_BREAKDOWN_NUMERIC) return;
      target.slot = this.numericSlots++;
      target.shift = Number.NaN;
    }
    const values = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      const x = d >= 0 ? numbers[d]! : Number.NaN;
      // NaN and ±Infinity stay out of the sums.
      values[i] = Number.isFinite(x) ? x : Number.NaN;
      if (Number.isNaN(target.shift) && Number.isFinite(x)) target.shift = x;
    }
    this.batchNumbers.push({ target: name, slot: target.slot, values });
  }

  /**
   * A text target's rows whose shape is not its home shape, while it has few other shapes. In a
   * batch whose patterns were sampled, the sampled rows stand for `shapeWeight` rows each: the
   * counts are then estimates, as the profile's pattern shares are.
   */
  private collectShapes(name: string, target: Target, codes: ColumnCodes, n: number): void {
    const { codes: code, counts, distinct, types, shapes, shapeWeight } = codes;
    const others = target.otherShapes;
    if (others === null) return;
    if (target.homeShape === undefined) {
      const byShape = new Map<string, number>();
      for (let d = 0; d < distinct; d++) {
        const shape = shapes[d];
        if (types[d] === T_STRING && shape !== undefined) byShape.set(shape, (byShape.get(shape) ?? 0) + counts[d]!);
      }
      let best = 0;
      for (const [shape, count] of byShape) {
        if (count > best) [target.homeShape, best] = [shape, count];
      }
      if (target.homeShape === undefined) return;
    }
    let rows = 0;
    for (let d = 0; d < distinct; d++) {
      const shape = shapes[d];
      if (types[d] !== T_STRING || shape === undefined || shape === target.homeShape) continue;
      others.add(shape);
      rows += counts[d]!;
    }
    if (others.size > MAX_BREAKDOWN_SHAPES) {
      target.otherShapes = null;
      return;
    }
    if (rows === 0) return;
    const at = new Int32Array(rows);
    const rowShapes: string[] = new Array(rows);
    let m = 0;
    for (let i = 0; i < n; i++) {
      const d = code[i]!;
      if (d < 0 || types[d] !== T_STRING) continue;
      const shape = shapes[d];
      if (shape === undefined || shape === target.homeShape) continue;
      at[m] = i;
      rowShapes[m++] = shape;
    }
    this.batchShapes.push({ target: name, rows: at, shapes: rowShapes, weight: shapeWeight });
  }

  /** The batch's rows (the first `count` of `rows`, indexes) that repeat an earlier row. */
  addDuplicates(kind: DuplicateKind, rows: Int32Array, count: number): void {
    this.batchDuplicates.push({ kind, rows: rows.slice(0, count) });
  }

  /** Counts the batch given by addColumn and addDuplicates, and ends it. */
  endColumns(): void {
    const candidates = this.batchCandidates;
    for (const { kind, rows } of this.batchDuplicates) {
      for (const { cells } of candidates) {
        for (let m = 0; m < rows.length; m++) {
          const cell = cells[rows[m]!];
          if (cell !== null && cell !== undefined) cell[kind]++;
        }
      }
    }
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
    for (const { target, rows, types, count } of this.batchOtherTypes) {
      for (const { cells } of candidates) {
        for (let m = 0; m < count; m++) {
          const cell = cells[rows[m]!];
          if (cell === null || cell === undefined) continue;
          cell.otherTypes ??= new Map();
          let byType = cell.otherTypes.get(target);
          if (byType === undefined) {
            byType = new Float64Array(TYPE_CODES);
            cell.otherTypes.set(target, byType);
          }
          byType[types[m]!]!++;
        }
      }
    }
    for (const { target, rows, shapes, weight } of this.batchShapes) {
      for (const { cells } of candidates) {
        for (let m = 0; m < rows.length; m++) {
          const cell = cells[rows[m]!];
          if (cell === null || cell === undefined) continue;
          cell.otherShapes ??= new Map();
          let byShape = cell.otherShapes.get(target);
          if (byShape === undefined) {
            byShape = new Map();
            cell.otherShapes.set(target, byShape);
          }
          byShape.set(shapes[m]!, (byShape.get(shapes[m]!) ?? 0) + weight);
        }
      }
    }
    for (const { target, slot, values } of this.batchNumbers) {
      const shift = this.targets.get(target)!.shift;
      const at = 3 * slot;
      for (const { name, cells } of candidates) {
        if (name === target) continue;
        for (let i = 0; i < values.length; i++) {
          const x = values[i]!;
          const cell = cells[i];
          if (Number.isNaN(x) || cell === null || cell === undefined) continue;
          if (cell.sums === null) cell.sums = new Float64Array(3 * MAX_BREAKDOWN_NUMERIC);
          const sums = cell.sums;
          const y = x - shift;
          sums[at]!++;
          sums[at + 1]! += y;
          sums[at + 2]! += y * y;
        }
      }
    }
    this.batchCandidates = [];
    this.batchMissing = [];
    this.batchOtherTypes = [];
    this.batchNumbers = [];
    this.batchDuplicates = [];
    this.batchShapes = [];
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
      cell = newCell();
      // A map key of its own: the value may be a slice of a whole chunk of the file's text.
      candidate.values.set(ownString(value), cell);
    }
    return cell;
  }

  /**
   * The breakdown attributes that split the rows (two values or more), by name. `typeFits(a)`
   * says which type codes are of attribute a's type (as its profile judged them).
   */
  finish(typeFits: (attribute: string) => ((t: number) => boolean) | undefined = () => undefined): BreakdownProfile[] {
    const out: BreakdownProfile[] = [];
    const fits = new Map([...this.targets.keys()].map((name) => [name, typeFits(name)]));
    for (const [attribute, c] of this.candidates) {
      if (c.values.size < 2) continue;
      const mismatchedTotal: Record<string, number> = {};
      const values = [...c.values].map(([value, cell]): BreakdownValue => {
        const entry: BreakdownValue = { value, rows: cell.rows, missing: Object.fromEntries(cell.missing) };
        const mismatched = this.mismatchedOf(attribute, cell, fits);
        if (mismatched) {
          entry.mismatched = mismatched;
          for (const [t, k] of Object.entries(mismatched)) mismatchedTotal[t] = (mismatchedTotal[t] ?? 0) + k;
        }
        const numeric = this.numericOf(attribute, cell);
        if (numeric) entry.numeric = numeric;
        const shapes = this.shapesOf(attribute, cell);
        if (shapes) entry.shapes = shapes;
        if (cell.duplicate_rows > 0) entry.duplicate_rows = cell.duplicate_rows;
        if (cell.duplicate_ids > 0) entry.duplicate_ids = cell.duplicate_ids;
        return entry;
      });
      const profile: BreakdownProfile = { attribute, rows: c.rows, missing: Object.fromEntries(c.missing), values };
      if (Object.keys(mismatchedTotal).length) profile.mismatched = mismatchedTotal;
      for (const kind of ["duplicate_rows", "duplicate_ids"] as const) {
        const total = values.reduce((s, v) => s + (v[kind] ?? 0), 0);
        if (total > 0) profile[kind] = total;
      }
      out.push(profile);
    }
    return out.sort((a, b) => (a.attribute < b.attribute ? -1 : a.attribute > b.attribute ? 1 : 0));
  }

  /** Per target, the rows of a cell whose value is not of the target's type; undefined when none. */
  private mismatchedOf(
    attribute: string,
    cell: Cell,
    fits: ReadonlyMap<string, ((t: number) => boolean) | undefined>,
  ): Record<string, number> | undefined {
    let out: Record<string, number> | undefined;
    for (const [name, target] of this.targets) {
      const ofType = fits.get(name);
      if (name === attribute || ofType === undefined || target.home === -1) continue;
      const byType = cell.otherTypes?.get(name);
      let mismatched = 0;
      if (byType !== undefined) for (let t = 0; t < TYPE_CODES; t++) if (!ofType(t)) mismatched += byType[t]!;
      if (!ofType(target.home)) mismatched += Math.max(0, homeTypeRows(cell, name));
      if (mismatched > 0) {
        out ??= {};
        out[name] = mismatched;
      }
    }
    return out;
  }

  /**
   * Per text target still followed by shape that showed more than one, a cell's text rows by shape: the other shapes as
   * counted, the home shape's rows as what the cell's rows leave once its missing values, values
   * of other types and other shapes are counted.
   */
  private shapesOf(attribute: string, cell: Cell): Record<string, Record<string, number>> | undefined {
    let out: Record<string, Record<string, number>> | undefined;
    for (const [name, target] of this.targets) {
      // Only targets that showed another shape than their home one: a pattern can have moved there.
      const shown = target.otherShapes;
      if (name === attribute || shown === null || shown.size === 0 || target.homeShape === undefined) continue;
      const byShape: Record<string, number> = {};
      let others = 0;
      for (const [shape, count] of cell.otherShapes?.get(name) ?? []) {
        byShape[shape] = count;
        others += count;
      }
      const home = Math.round(homeTypeRows(cell, name) - others);
      if (home > 0) byShape[target.homeShape] = home;
      out ??= {};
      out[name] = byShape;
    }
    return out;
  }

  /** Per numeric target, its values in a cell's rows; undefined when none. */
  private numericOf(attribute: string, cell: Cell): Record<string, NumericSummary> | undefined {
    const sums = cell.sums;
    if (sums === null) return undefined;
    let out: Record<string, NumericSummary> | undefined;
    for (const [name, target] of this.targets) {
      if (target.slot === -1 || name === attribute) continue;
      const at = 3 * target.slot;
      const count = sums[at]!;
      if (count === 0) continue;
      const mean = sums[at + 1]! / count;
      out ??= {};
      out[name] = { count, mean: target.shift + mean, variance: Math.max(0, sums[at + 2]! / count - mean * mean) };
    }
    return out;
  }
}
