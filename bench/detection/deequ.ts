/**
 * bench/detection: the peer — Deequ's constraint suggestion (awslabs/deequ,
 * suggestions/rules/*.scala and profiles/ColumnProfiler.scala) re-implemented over DuckDB, read
 * from the Scala and written anew here. The peer reads the very CSV bytes the service is sent,
 * every column as text (as Spark reads a CSV without a schema: "" is null), profiles the training
 * batches, suggests constraints, and checks them on a test batch; it detects a problem when any
 * suggested constraint fails.
 *
 * Profile (ColumnProfiler): completeness, approximate distinct count (HyperLogLog), the data type
 * inferred from the text (DataType analyzer: Fractional / Integral / Boolean / String regexes,
 * then determineType), the minimum of numeric columns (values cast; failed casts are null), and
 * an exact histogram for columns with at most 120 approximate distinct values.
 *
 * Rules: Deequ's default set (Rules.DEFAULT) plus UniqueIfApproximatelyUniqueRule:
 * - CompleteIfCompleteRule: completeness 1 → isComplete (completeness = 1).
 * - RetainCompletenessRule: 0.2 < completeness < 1 → completeness ≥ lower bound of the 95 % Wald
 *   interval, rounded down to 2 decimals (Deequ's default interval strategy).
 * - RetainTypeRule: inferred Integral / Fractional / Boolean → that type's share of the non-null
 *   values = 1.
 * - CategoricalRangeRule: a histogram, type String or Integral, at most 10 % of its values seen
 *   once → every value IN (the values seen) (compliance = 1).
 * - FractionalCategoricalRangeRule: a histogram, type String or Integral, at most 40 % seen once,
 *   and the most frequent values covering ≥ 90 % of the rows cover less than all of them →
 *   compliance with IN (those values) ≥ Wald lower bound of their coverage.
 * - NonNegativeNumbersRule: numeric type and minimum ≥ 0 → compliance of `col >= 0` = 1.
 * - UniqueIfApproximatelyUniqueRule: complete and |1 − distinct / rows| ≤ 0.08 → uniqueness = 1.
 *
 * Compliance is checked as the code Deequ suggests for each constraint does (Check.isContainedIn:
 * `col IS NULL OR col IN (…)`; Check.isNonNegative: `COALESCE(CAST(col AS DOUBLE), 0) >= 0`): a
 * null passes, and missing values are left to the completeness rules. (The rules' own constraint
 * objects count a null row as failing, which would make every range check of an incomplete column
 * fail on clean data.)
 */
import { type DuckDBConnection, DuckDBInstance } from "@duckdb/node-api";

/** A suggested constraint: the metric's SQL over a table `t`, and the bound it must meet. */
export interface Constraint {
  rule: string;
  column: string;
  description: string;
  /** An aggregate over `t` (one row). */
  metric: string;
  /** The metric must equal 1, or be at least this. */
  atLeast?: number;
}

/** A constraint that failed on a batch, with the metric's value there. */
export interface Violation {
  rule: string;
  column: string;
  description: string;
  value: number | null;
}

type DataType = "Unknown" | "Fractional" | "Integral" | "Boolean" | "String";

interface ColumnProfile {
  column: string;
  completeness: number;
  approxDistinct: number;
  dataType: DataType;
  minimum?: number;
  /** value → count, nulls under NULL_VALUE; only for low-cardinality columns. */
  histogram?: Map<string, number>;
}

/** Deequ's default confidence for the suggested bounds, and its histogram threshold. */
const Z_95 = 1.959963984540054;
const LOW_CARDINALITY_HISTOGRAM_THRESHOLD = 120;
const NULL_VALUE = "NullValue";

// The DataType analyzer's patterns (StatefulDataType), as RE2 full matches.
const FRACTIONAL = String.raw`(-|\+)? ?\d+((\.\d+)|((?:\.\d+)?[Ee][-+]?\d+))`;
const INTEGRAL = String.raw`(-|\+)? ?\d+`;

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

/** The type class of one value, as the DataType analyzer counts it. */
const typeClass = (c: string) =>
  `CASE WHEN ${c} IS NULL THEN 'Unknown' WHEN regexp_full_match(${c}, ${literal(FRACTIONAL)}) THEN 'Fractional' ` +
  `WHEN regexp_full_match(${c}, ${literal(INTEGRAL)}) THEN 'Integral' WHEN ${c} IN ('true', 'false') THEN 'Boolean' ELSE 'String' END`;

/** The Wald interval's lower bound, rounded down to 2 decimals (WaldIntervalStrategy). */
export function waldLowerBound(p: number, n: number): number {
  return Math.floor((p - Z_95 * Math.sqrt((p * (1 - p)) / n)) * 100) / 100;
}

/** DataTypeHistogram.determineType. */
function determineType(counts: Record<DataType, number>, rows: number): DataType {
  if (counts.Unknown === rows) return "Unknown";
  const numbers = counts.Integral + counts.Fractional;
  if (counts.String > 0 || (counts.Boolean > 0 && numbers > 0)) return "String";
  if (counts.Boolean > 0) return "Boolean";
  return counts.Fractional > 0 ? "Fractional" : "Integral";
}

const compliance = (predicate: string) => `sum(CASE WHEN (${predicate}) THEN 1 ELSE 0 END)::DOUBLE / count(*)`;

/** The suggestions of the rules for one column profile. */
function suggestFor(p: ColumnProfile, rows: number): Constraint[] {
  const c = ident(p.column);
  const out: Constraint[] = [];
  const add = (rule: string, description: string, metric: string, atLeast?: number) =>
    out.push({ rule, column: p.column, description, metric, ...(atLeast === undefined ? {} : { atLeast }) });

  if (p.completeness === 1) add("CompleteIfComplete", `'${p.column}' is not null`, `count(${c})::DOUBLE / count(*)`);
  if (p.completeness > 0.2 && p.completeness < 1) {
    const bound = waldLowerBound(p.completeness, rows);
    add("RetainCompleteness", `'${p.column}' completeness >= ${bound}`, `count(${c})::DOUBLE / count(*)`, bound);
  }
  if (p.dataType === "Integral" || p.dataType === "Fractional" || p.dataType === "Boolean") {
    add(
      "RetainType",
      `'${p.column}' has type ${p.dataType}`,
      `coalesce(count(*) FILTER (WHERE (${typeClass(c)}) = '${p.dataType}')::DOUBLE / nullif(count(${c}), 0), 0)`,
    );
  }
  const categorical = p.histogram && (p.dataType === "String" || p.dataType === "Integral");
  if (p.histogram && categorical) {
    const entries = [...p.histogram.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
    const uniqueRatio = entries.filter(([, n]) => n === 1).length / entries.length;
    const inList = (values: string[]) => `${c} IS NULL OR ${c} IN (${values.map(literal).join(", ")})`;
    const nonNull = entries.filter(([v]) => v !== NULL_VALUE).map(([v]) => v);
    if (uniqueRatio <= 0.1 && nonNull.length > 0) {
      add("CategoricalRange", `'${p.column}' in ${nonNull.length} values`, compliance(inList(nonNull)));
    }
    // The most frequent values until they cover 90 % of the rows (nulls included in the ratios).
    let coverage = 0;
    const top: string[] = [];
    for (const [value, n] of entries) {
      if (coverage >= 0.9) break;
      coverage += n / rows;
      top.push(value);
    }
    const topNonNull = top.filter((v) => v !== NULL_VALUE);
    if (uniqueRatio <= 0.4 && coverage < 1 && topNonNull.length > 0) {
      const bound = waldLowerBound(coverage, rows);
      add(
        "FractionalCategoricalRange",
        `'${p.column}' in ${topNonNull.length} values for >= ${bound}`,
        compliance(inList(topNonNull)),
        bound,
      );
    }
  }
  if ((p.dataType === "Integral" || p.dataType === "Fractional") && p.minimum !== undefined && p.minimum >= 0) {
    add(
      "NonNegativeNumbers",
      `'${p.column}' has no negative values`,
      compliance(`COALESCE(TRY_CAST(${c} AS DOUBLE), 0.0) >= 0`),
    );
  }
  if (p.completeness === 1 && Math.abs(1 - p.approxDistinct / rows) <= 0.08) {
    add(
      "UniqueIfApproximatelyUnique",
      `'${p.column}' is unique`,
      `(SELECT count(*) FROM (SELECT ${c} FROM t WHERE ${c} IS NOT NULL GROUP BY ${c} HAVING count(*) = 1))::DOUBLE / count(*)`,
    );
  }
  return out;
}

export class DeequPeer {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  static async open(): Promise<DeequPeer> {
    const instance = await DuckDBInstance.create(":memory:", { threads: "1" });
    return new DeequPeer(instance, await instance.connect());
  }

  private async rows(sql: string): Promise<Array<Record<string, unknown>>> {
    const reader = await this.connection.runAndReadAll(sql);
    return reader.getRowObjectsJS() as Array<Record<string, unknown>>;
  }

  /** CSV files read as Spark reads them without a schema: a header, every column text, "" null. */
  private static source(files: string[]): string {
    const list = files.map(literal).join(", ");
    return `read_csv([${list}], header = true, all_varchar = true, delim = ',', quote = '"', escape = '"')`;
  }

  /** Suggests constraints from the concatenated training files (one CSV per batch, same header). */
  async suggest(files: string[], columns: readonly string[]): Promise<Constraint[]> {
    await this.connection.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM ${DeequPeer.source(files)}`);
    const selects = ["count(*) AS n"];
    columns.forEach((name, i) => {
      const c = ident(name);
      selects.push(
        `count(${c}) AS nn${i}`,
        `approx_count_distinct(${c}) AS ad${i}`,
        `min(TRY_CAST(${c} AS DOUBLE)) AS min${i}`,
        ...(["Fractional", "Integral", "Boolean", "String"] as const).map(
          (type) => `count(*) FILTER (WHERE (${typeClass(c)}) = '${type}') AS ${type}${i}`,
        ),
      );
    });
    const [stats] = await this.rows(`SELECT ${selects.join(", ")} FROM t`);
    const n = Number(stats!.n);
    const out: Constraint[] = [];
    for (const [i, column] of columns.entries()) {
      const nonNull = Number(stats![`nn${i}`]);
      const counts: Record<DataType, number> = {
        Unknown: n - nonNull,
        Fractional: Number(stats![`Fractional${i}`]),
        Integral: Number(stats![`Integral${i}`]),
        Boolean: Number(stats![`Boolean${i}`]),
        String: Number(stats![`String${i}`]),
      };
      const profile: ColumnProfile = {
        column,
        completeness: n === 0 ? 0 : nonNull / n,
        approxDistinct: Number(stats![`ad${i}`]),
        dataType: determineType(counts, n),
      };
      if (profile.dataType === "Integral" || profile.dataType === "Fractional") {
        const min = stats![`min${i}`];
        if (min !== null && min !== undefined) profile.minimum = Number(min);
      }
      if (profile.dataType !== "Unknown" && profile.approxDistinct <= LOW_CARDINALITY_HISTOGRAM_THRESHOLD) {
        const c = ident(column);
        const histogram = new Map<string, number>();
        for (const row of await this.rows(`SELECT ${c} AS v, count(*) AS n FROM t GROUP BY ${c}`)) {
          histogram.set(row.v === null ? NULL_VALUE : String(row.v), Number(row.n));
        }
        profile.histogram = histogram;
      }
      out.push(...suggestFor(profile, n));
    }
    await this.connection.run("DROP TABLE t");
    return out;
  }

  /** Checks the constraints on one CSV file; returns those that fail. */
  async check(file: string, constraints: readonly Constraint[]): Promise<Violation[]> {
    if (constraints.length === 0) return [];
    await this.connection.run(`CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM ${DeequPeer.source([file])}`);
    const [row] = await this.rows(`SELECT ${constraints.map((k, i) => `${k.metric} AS m${i}`).join(", ")} FROM t`);
    await this.connection.run("DROP TABLE t");
    const out: Violation[] = [];
    constraints.forEach((k, i) => {
      const raw = row![`m${i}`];
      const value = raw === null || raw === undefined ? null : Number(raw);
      const ok = value !== null && !Number.isNaN(value) && (k.atLeast === undefined ? value === 1 : value >= k.atLeast);
      if (!ok) out.push({ rule: k.rule, column: k.column, description: k.description, value });
    });
    return out;
  }

  close() {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
