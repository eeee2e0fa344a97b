/**
 * The result of profiling an asset: what every connector produces (file streaming or SQL
 * pushdown) and what the policies read. Plain JSON, so it can travel to the AssetMonitor.
 */

/** Types a value can be inferred as, from its text or its database type. */
export const VALUE_TYPES = ["integer", "number", "boolean", "date", "timestamp", "string"] as const;
export type ValueType = (typeof VALUE_TYPES)[number];

/** The type of an attribute with no non-null value yet: it has none, so its first values are no change of type. */
export const UNKNOWN_TYPE = "unknown";

/** Probabilities at which every numeric attribute reports a quantile. */
export const QUANTILE_POINTS = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1] as const;

export interface AttributeProfile {
  name: string;
  /** The dominant type of the non-null values (or the database's type, mapped). */
  inferred_type: ValueType;
  /** Type as the source declares it (database column type), when it declares one. */
  declared_type?: string;
  /** Rows seen for this attribute (= the asset's row count, or the sampled row count). */
  count: number;
  /** Missing values: SQL NULL, JSON null or absent, empty CSV field. */
  nulls: number;
  /** Present but empty or blank strings. */
  empties: number;
  /** Distinct non-null values (exact when `distinct_exact`, else an estimate within ~2 %). */
  distinct: number;
  distinct_exact: boolean;
  /** Numbers for numeric types, ISO strings for dates/timestamps, strings otherwise. */
  min?: number | string;
  max?: number | string;
  /** Numeric attributes only. */
  mean?: number;
  stddev?: number;
  /** Numeric attributes only: values at QUANTILE_POINTS, same order. */
  quantiles?: number[];
  /**
   * Numeric attributes of file profiles only: the grid the values sit on, the largest s such that
   * every value is an integer multiple of s (s = g / 10^k, k ≤ 6 decimal places): 0.01 for cents,
   * 5 for 10, 20, 35. Absent when a value needs more than 6 decimal places, a value × 10^k reaches
   * 1e15, or every value is 0 (src/scan/profiler/step.ts). SQL pushdown leaves it out.
   */
  step?: number;
  /** Most frequent values (as strings) with their counts, most frequent first (up to 20). */
  top_values: Array<{ value: string; count: number }>;
  /** Non-null values per inferred type. */
  type_counts: Partial<Record<ValueType, number>>;
  /** Non-null values that are not of `inferred_type` (or of the declared type). */
  type_mismatches: number;
  /** Shape classes of the values (e.g. "Aa9" runs: "aaaa@aaaa.aaa") and their shares, top 20. */
  patterns: Array<{ pattern: string; share: number }>;
  /** Mean length of string values. */
  mean_length?: number;
}

export interface SchemaField {
  name: string;
  type: string;
  nullable: boolean;
}

export interface AssetProfile {
  row_count: number;
  /** Bytes read (files) or reported by the database, when known. */
  bytes?: number;
  schema: SchemaField[];
  attributes: AttributeProfile[];
  /** Max of the timestamp attribute, ISO 8601 UTC, when the asset has one. */
  freshness?: string;
  /** Rows whose id_attributes repeat an earlier row's, when id_attributes are set. */
  duplicate_count?: number;
  /**
   * Rows that exactly repeat an earlier row: every attribute equal, null equal to null (SQL: as
   * the database compares, so under MySQL's collations 'a' and 'A ' may be equal). Counted over
   * the profiled rows, with or without id_attributes. File profiles leave it out past
   * MAX_DISTINCT_ROWS distinct rows (profiler/profile-builder.ts) and in segments' sub-profiles.
   */
  duplicate_rows?: number;
  /**
   * What the investigator reads (unless skip_investigator): per attribute with few values, per
   * value, its rows, how many of them miss or mistype each other attribute, and numeric attributes' means.
   */
  breakdown?: BreakdownProfile[];
  /**
   * Per segment value (asset option `segments`): the same metrics over that segment's rows; per
   * segment attribute, its rows with none of the listed values as the value OTHER_SEGMENT.
   */
  segments?: Array<{ attribute: string; value: string; profile: Omit<AssetProfile, "segments"> }>;
  /** True when only a sample was profiled (sample_fraction < 100 or limit reached). */
  sampled: boolean;
}

/** The segment of an attribute's rows that hold none of its listed segment values (nulls included). */
export const OTHER_SEGMENT = "(other)";

// The investigator's breakdown (scan/profiler/breakdown.ts, or SQL: scan/sql/profile-table.ts).

/** A numeric attribute's values within the rows of one breakdown value. */
export interface NumericSummary {
  count: number;
  mean: number;
  /** Population variance. */
  variance: number;
}

/** One value of a breakdown attribute. */
export interface BreakdownValue {
  value: string;
  rows: number;
  /** Of these rows, how many miss each other attribute. */
  missing: Record<string, number>;
  /** Of these rows, how many hold a value not of each other attribute's type (when any do). */
  mismatched?: Record<string, number>;
  /** Per numeric attribute, its values in these rows (file scans: up to MAX_BREAKDOWN_NUMERIC). */
  numeric?: Record<string, NumericSummary>;
  /** Of these rows, how many repeat an earlier row exactly, or an earlier row's ids (file scans). */
  duplicate_rows?: number;
  duplicate_ids?: number;
  /** Per text attribute with few shapes, its text values in these rows by shape (file scans). */
  shapes?: Record<string, Record<string, number>>;
}

/** One breakdown attribute of a profile: its rows, and per value the rows and problem counts. */
export interface BreakdownProfile {
  attribute: string;
  /** Rows in which the attribute held a value (it is followed from its first value on). */
  rows: number;
  /** Of those rows, how many miss each other attribute. */
  missing: Record<string, number>;
  /** Of those rows, how many hold a value not of each other attribute's type (when any do). */
  mismatched?: Record<string, number>;
  /** Of those rows, how many repeat an earlier row exactly, or an earlier row's ids (file scans). */
  duplicate_rows?: number;
  duplicate_ids?: number;
  values: BreakdownValue[];
}
