/**
 * bench/capacity: what the statements of a phase cost a D1 database's single thread. The statements
 * the scan path issued (captured by meter.ts, with their bound values, in the order they were
 * issued) are run again on a copy of the D1 database taken before the phase, with Node's SQLite
 * (the engine D1 runs), one call at a time as D1 does: a batch in one transaction, a lone statement
 * in its own; synchronous=OFF, so that what is timed is SQLite's work on the statements, not this
 * machine's disk. Timed in this process's CPU time, which a shared machine's other load hardly moves.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { DatabaseSync, type SQLInputValue } from "node:sqlite";
import { type CapturedStatement, isWrite } from "./meter";

export interface ReplayResult {
  statements: number;
  writes: number;
  /** CPU milliseconds of the whole replay (every call from BEGIN to COMMIT). */
  ms: number;
  /** Calls that failed on the copy (then rolled back, as D1 does a failed batch). */
  failed: number;
  firstError?: string;
}

function bound(value: unknown): SQLInputValue {
  if (value !== null && typeof value === "object" && "bytes" in value) {
    return new Uint8Array((value as { bytes: number[] }).bytes);
  }
  return value as SQLInputValue;
}

/** Groups statements into their calls (a batch, or one statement), in order. */
function callsOf(statements: CapturedStatement[]): CapturedStatement[][] {
  const calls: CapturedStatement[][] = [];
  for (const s of statements) {
    const last = calls.at(-1);
    if (last && last[0]!.call === s.call) last.push(s);
    else calls.push([s]);
  }
  return calls;
}

/** Runs `statements` on a fresh copy of `database` (a D1 file copied by storage.ts) once; returns the timings. */
function replayOnce(database: string, statements: CapturedStatement[]): ReplayResult {
  const dir = mkdtempSync(join(tmpdir(), "bench-capacity-replay-"));
  const copy = join(dir, basename(database));
  copyFileSync(database, copy);
  if (existsSync(`${database}-wal`)) copyFileSync(`${database}-wal`, `${copy}-wal`);
  const db = new DatabaseSync(copy);
  const result: ReplayResult = { statements: 0, writes: 0, ms: 0, failed: 0 };
  try {
    db.exec("PRAGMA synchronous = OFF");
    // D1 enforces foreign keys: so does the replay.
    db.exec("PRAGMA foreign_keys = ON");
    const prepared = new Map<string, ReturnType<DatabaseSync["prepare"]>>();
    const start = process.cpuUsage();
    for (const call of callsOf(statements)) {
      try {
        db.exec("BEGIN");
        for (const s of call) {
          let stmt = prepared.get(s.sql);
          if (!stmt) {
            stmt = db.prepare(s.sql);
            prepared.set(s.sql, stmt);
          }
          stmt.all(...s.params.map(bound));
        }
        db.exec("COMMIT");
      } catch (err) {
        if (db.isTransaction) db.exec("ROLLBACK");
        result.failed++;
        result.firstError ??= `${err instanceof Error ? err.message : String(err)} in ${call[0]!.sql.slice(0, 120)}`;
      }
      result.statements += call.length;
      result.writes += call.filter((s) => isWrite(s.sql)).length;
    }
    const cpu = process.cpuUsage(start);
    result.ms = (cpu.user + cpu.system) / 1000;
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return result;
}

/**
 * The median of `runs` replays (by CPU time) of the statements on a copy of the state's one D1
 * database. With several (shards), which file is which binding is not known here: no replay, NaN.
 */
export function replay(databases: string[], statements: CapturedStatement[], runs: number): ReplayResult {
  if (databases.length !== 1) {
    return {
      statements: statements.length,
      writes: statements.filter((s) => isWrite(s.sql)).length,
      ms: Number.NaN,
      failed: 0,
    };
  }
  const results = Array.from({ length: runs }, () => replayOnce(databases[0]!, statements));
  results.sort((a, b) => a.ms - b.ms);
  return results[Math.floor(results.length / 2)]!;
}
