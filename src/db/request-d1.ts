/**
 * One D1 binding for every request of an isolate, whose statements run on the D1 of the request
 * they are run in (its metered session, see src/app.ts), held in an AsyncLocalStorage.
 *
 * Why: a drizzle query prepared once (src/db/prepared.ts) keeps the binding it was prepared on,
 * and building a query's SQL text was about half of our code's CPU per read (bench/api/in-process).
 * With this binding, the request database is one per isolate, its prepared queries are built once,
 * and each statement still goes to the request's own session and meter when it runs.
 *
 * A statement run outside a request (no D1 in the storage) throws: queue consumers and Durable
 * Objects use createDb(env.DB) over their own binding, never this one.
 */
import { AsyncLocalStorage } from "node:async_hooks";

const current = new AsyncLocalStorage<D1Database>();

/** Runs `fn` with `d1` as the request's D1: what the request-scoped binding's statements run on. */
export function withRequestD1<T>(d1: D1Database, fn: () => Promise<T>): Promise<T> {
  return current.run(d1, fn);
}

function requestD1(): D1Database {
  const d1 = current.getStore();
  if (!d1) throw new Error("A request-scoped D1 statement ran outside a request (withRequestD1)");
  return d1;
}

/** A statement that names its SQL and values, and is prepared on the request's D1 when it runs. */
class RequestStatement {
  constructor(
    readonly query: string,
    readonly values: readonly unknown[],
  ) {}

  bind(...values: unknown[]): RequestStatement {
    return new RequestStatement(this.query, values);
  }

  /** This statement prepared on `d1`. */
  on(d1: D1Database): D1PreparedStatement {
    const statement = d1.prepare(this.query);
    return this.values.length > 0 ? statement.bind(...this.values) : statement;
  }

  first<T>(column?: string): Promise<T | null> {
    const statement = this.on(requestD1());
    return column === undefined ? statement.first<T>() : statement.first<T>(column);
  }

  all<T>(): Promise<D1Result<T>> {
    return this.on(requestD1()).all<T>();
  }

  run<T>(): Promise<D1Result<T>> {
    return this.on(requestD1()).run<T>();
  }

  raw<T>(options?: { columnNames?: boolean }): Promise<T[]> {
    return this.on(requestD1()).raw<T>(options as { columnNames?: false });
  }
}

/** The binding itself: statements from `prepare`, batches and exec on the request's D1. */
export const requestScopedD1 = {
  prepare: (query: string) => new RequestStatement(query, []),
  batch(statements: RequestStatement[]) {
    const d1 = requestD1();
    return d1.batch(statements.map((s) => s.on(d1)));
  },
  exec: (query: string) => requestD1().exec(query),
} as unknown as D1Database;
