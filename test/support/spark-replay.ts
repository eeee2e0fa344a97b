/**
 * The Spark driver's profile of a relation, with every statement it issues run by an engine that is
 * not ours: DuckDB (@duckdb/node-api), after a mechanical rewrite of Spark's spelling into DuckDB's
 * (`translate`). The driver runs twice under a SparkSession stand-in (spark/tests/replay_session.py):
 * once to record its statements, once to shape its profile from DuckDB's answers. Node only (a child
 * process and a native module): used by test/scan/spark/parity.unit.test.ts and, for the workerd
 * lane, served by driver-replay.global.ts.
 */

import { spawnSync } from "node:child_process";
import { join } from "node:path";
import type { DuckDBConnection } from "@duckdb/node-api";
import type { AssetProfile } from "../../src/contracts/profile";

/** A Spark SQL statement of the driver in DuckDB's spelling: identifiers, literals, and the few functions named differently. */
export function translate(spark: string): string {
  let out = "";
  for (let i = 0; i < spark.length; ) {
    const c = spark[i] as string;
    if (c === "`") {
      const end = spark.indexOf("`", i + 1);
      out += `"${spark.slice(i + 1, end).replaceAll('"', '""')}"`;
      i = end + 1;
    } else if (c === "'") {
      // A Spark string literal: backslash escapes; DuckDB's has none and doubles its quote.
      let text = "";
      let j = i + 1;
      for (; spark[j] !== "'"; j++) {
        if (spark[j] === "\\") j++;
        text += spark[j];
      }
      out += `'${text.replaceAll("'", "''")}'`;
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return (
    out
      .replace(/^CACHE TABLE (\w+) AS /, "CREATE OR REPLACE TEMP TABLE $1 AS ")
      .replace(/^UNCACHE TABLE IF EXISTS /, "DROP TABLE IF EXISTS ")
      .replace(/("(?:[^"]|"")+") RLIKE ('(?:[^']|'')*')/g, "regexp_matches($1, $2)")
      // DuckDB's own approx_count_distinct is far off Spark's HLL++ (rsd 0.02) at these sizes: the exact
      // count stands for the value Spark's estimate is within 2 % of.
      .replace(/approx_count_distinct\(([^,()]+), [0-9.]+\)/g, "count(DISTINCT $1)")
      .replace(/percentile_approx\((.+?), array\(([^)]*)\), \d+\)/g, "quantile_disc($1, [$2])")
      .replace(/count\(DISTINCT struct\(/g, "count(DISTINCT row(")
      .replace(/ AS rows\b/, ' AS "rows"')
  );
}

/** A DuckDB value as the driver receives it from Spark: numbers, text, lists, naive datetimes. */
function sparkValue(v: unknown): unknown {
  if (typeof v === "bigint") return Number(v);
  if (v === null || typeof v !== "object") return v;
  if ("items" in v && Array.isArray((v as { items: unknown[] }).items))
    return (v as { items: unknown[] }).items.map(sparkValue);
  if ("micros" in v)
    return { $ts: new Date(Number((v as { micros: bigint }).micros / 1000n)).toISOString().slice(0, -1) };
  if ("width" in v && "scale" in v) return Number(String(v));
  return String(v);
}

const DRIVER = join(import.meta.dirname, "../../spark/tests/replay_session.py");

function driver(request: object): { statements: string[]; profile?: AssetProfile } {
  const run = spawnSync("python3", [DRIVER], { input: JSON.stringify(request), encoding: "utf8" });
  if (run.status !== 0) throw new Error(run.stderr);
  return JSON.parse(run.stdout);
}

/** A relation's columns as the driver's DataFrame schema gives them: (name, Spark simpleString). */
export type SparkColumns = Array<[string, string]>;

/** The driver's profile of `dq_source` (a DuckDB relation), its statements run on DuckDB. */
export async function driverProfile(db: DuckDBConnection, columns: SparkColumns, options: object) {
  const { statements } = driver({ columns, options });
  const results: unknown[][] = [];
  for (const statement of statements) {
    // The value shapes need a back-reference, `(.)\1+`, which DuckDB's RE2 has not: left empty.
    if (statement.includes("'(.)\\\\1+'")) {
      results.push([]);
      continue;
    }
    const reader = await db.runAndReadAll(translate(statement));
    results.push(
      reader.getRowObjects().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, sparkValue(v)]))),
    );
  }
  const replayed = driver({ columns, options, results });
  if (JSON.stringify(replayed.statements) !== JSON.stringify(statements)) {
    throw new Error("the driver issued other statements when given the answers: its run is not replayable");
  }
  return replayed.profile as AssetProfile;
}
