/**
 * A D1 binding over node:sqlite, for bench/api/in-process.ts: the calls our code and drizzle make
 * (`prepare` → `bind` → `first`/`all`/`run`/`raw`, `batch` in one transaction, `exec`,
 * `withSession` → `getBookmark`), answered the way D1 answers them (rows as objects, `raw()` as
 * arrays, booleans bound as 0/1). It stands in for the platform so that what is measured is our
 * code: SQLite runs in the same process, with no RPC, JSON or Durable Object in between. Not for
 * tests: those run against the real local D1 (vitest-pool-workers).
 */
import { DatabaseSync, type StatementSync } from "node:sqlite";

type Value = null | number | bigint | string | Uint8Array;

const bindable = (v: unknown): Value => {
  if (typeof v === "boolean") return v ? 1 : 0;
  if (v === undefined) return null;
  if (v instanceof ArrayBuffer) return new Uint8Array(v);
  return v as Value;
};

const NO_BOOKMARK = "00000000-00000000-00000000-00000000000000000000000000000000";

export class SqliteD1 {
  /** Statements run since the last reset (a batch counts each of its statements). */
  statements = 0;
  private readonly db: DatabaseSync;
  private readonly cache = new Map<string, StatementSync>();

  constructor(path = ":memory:") {
    this.db = new DatabaseSync(path);
  }

  /** The statement for `sql`, compiled once (as D1 caches its prepared statements). */
  compiled(sql: string): StatementSync {
    let st = this.cache.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.cache.set(sql, st);
    }
    return st;
  }

  prepare(sql: string): SqliteStatement {
    return new SqliteStatement(this, sql, []);
  }

  async batch(statements: SqliteStatement[]) {
    this.db.exec("BEGIN");
    try {
      const out = statements.map((s) => s.allSync());
      this.db.exec("COMMIT");
      return out;
    } catch (err) {
      this.db.exec("ROLLBACK");
      throw err;
    }
  }

  async exec(sql: string) {
    this.db.exec(sql);
    return { count: 1, duration: 0 };
  }

  withSession() {
    return {
      prepare: (sql: string) => this.prepare(sql),
      batch: (statements: SqliteStatement[]) => this.batch(statements),
      getBookmark: () => NO_BOOKMARK,
    };
  }
}

export class SqliteStatement {
  constructor(
    private readonly d1: SqliteD1,
    private readonly sql: string,
    private readonly params: Value[],
  ) {}

  bind(...values: unknown[]): SqliteStatement {
    return new SqliteStatement(this.d1, this.sql, values.map(bindable));
  }

  private statement(arrays: boolean): StatementSync {
    this.d1.statements++;
    const st = this.d1.compiled(this.sql);
    st.setReturnArrays(arrays);
    return st;
  }

  allSync() {
    const st = this.statement(false);
    if (st.columns().length === 0) {
      const r = st.run(...this.params);
      return {
        results: [],
        success: true,
        meta: { changes: Number(r.changes), last_row_id: Number(r.lastInsertRowid) },
      };
    }
    return { results: st.all(...this.params), success: true, meta: {} };
  }

  async all() {
    return this.allSync();
  }

  async run() {
    return this.allSync();
  }

  async first(column?: string) {
    const row = this.statement(false).get(...this.params) as Record<string, unknown> | undefined;
    if (row === undefined) return null;
    return column === undefined ? row : row[column];
  }

  async raw(options?: { columnNames?: boolean }) {
    const st = this.statement(true);
    const rows = st.all(...this.params) as unknown[];
    return options?.columnNames ? [st.columns().map((c) => c.name), ...rows] : rows;
  }
}
