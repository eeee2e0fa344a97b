/**
 * What the fake warehouse providers share: the fixture table, the HTTP plumbing, provider SQL
 * turned into PostgreSQL's, its execution on PostgreSQL, and the store of submitted statements.
 */

import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type postgres from "postgres";

export const HOST = "127.0.0.1";
/** Rows in a result page of every provider, so any result beyond 3 rows is paged. */
export const PAGE = 3;

/** The fixture table, as each provider would describe it. */
export const ITEMS = [
  { name: "id", pg: "bigint NOT NULL", bigquery: "INT64", databricks: "bigint", nullable: false },
  { name: "name", pg: "text", bigquery: "STRING", databricks: "string", nullable: true },
  { name: "price", pg: "double precision", bigquery: "FLOAT64", databricks: "double", nullable: true },
  { name: "active", pg: "boolean", bigquery: "BOOL", databricks: "boolean", nullable: true },
  { name: "created_at", pg: "timestamp", bigquery: "TIMESTAMP", databricks: "timestamp", nullable: true },
];
export const ITEM_ROWS = [
  "(1, 'apple', 1.5, true, '2024-01-01 10:00:00')",
  "(2, 'banana', 0.25, false, '2024-01-02 10:00:00')",
  "(3, 'cherry', NULL, true, '2024-01-03 10:00:00')",
  "(4, NULL, 2.75, NULL, '2024-01-04 10:00:00')",
  "(5, 'date', 3, false, '2024-01-05 10:00:00')",
  "(6, 'elder', 4.5, true, '2024-01-06 10:00:00')",
  "(7, 'fig', 5.25, true, '2024-01-07 10:00:00')",
];

// ---------------------------------------------------------------------------------------------
// HTTP

/** One provider's answer to a request under its path prefix; `body` is the request body as sent. */
export type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, body: Buffer) => Promise<void>;

export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export function send(res: ServerResponse, status: number, body: unknown, type = "application/json") {
  res.writeHead(status, { "content-type": type });
  res.end(JSON.stringify(body));
}

/** A refusal of the request shape: the provider's 400 with what is wrong. */
export class BadRequest extends Error {}
export const need = (ok: unknown, what: string) => {
  if (!ok) throw new BadRequest(what);
};

// ---------------------------------------------------------------------------------------------
// SQL on PostgreSQL

/** A statement's result as PostgreSQL gave it: columns (name, type oid) and rows of JS values. */
export interface Result {
  columns: { name: string; type: number }[];
  rows: unknown[][];
}

/** An SQL error, with the PostgreSQL SQLSTATE that the providers' shapes are chosen by. */
export interface SqlFailure {
  code: string;
  message: string;
}

export type Outcome = { ok: true; result: Result } | { ok: false; error: SqlFailure };

/** Runs a statement already in PostgreSQL's SQL; an SQL error is an outcome, not a throw. */
export type Run = (sqlText: string, params: (string | null)[]) => Promise<Outcome>;

export function createRunner(pg: postgres.Sql): Run {
  return async (sqlText, params) => {
    try {
      const rows = await pg.unsafe(sqlText, params as string[]).values();
      const columns = (rows.columns ?? []).map((c) => ({ name: c.name, type: c.type }));
      return { ok: true, result: { columns, rows: [...rows] as unknown[][] } };
    } catch (err) {
      const e = err as { code?: string; message?: string };
      return { ok: false, error: { code: String(e.code ?? "XX000"), message: String(e.message ?? err) } };
    }
  };
}

/**
 * Provider SQL to PostgreSQL: `?` (positional) or `:name` (named) markers become $n, backtick
 * identifiers become double-quoted; string literals, quoted identifiers and comments are kept.
 * Returns the text and, for named markers, the names in $n order.
 */
export function toPostgres(
  text: string,
  markers: "positional" | "named",
): { sql: string; count: number; names: string[] } {
  let out = "";
  let count = 0;
  const names: string[] = [];
  for (let i = 0; i < text.length; ) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < text.length) {
        if (text[j] === "\\" && ch === "'") j += 2;
        else if (text[j] === ch && text[j + 1] === ch) j += 2;
        else if (text[j] === ch) break;
        else j++;
      }
      out += text.slice(i, j + 1);
      i = j + 1;
    } else if (ch === "`") {
      const j = text.indexOf("`", i + 1);
      out += `"${text.slice(i + 1, j).replaceAll('"', '""')}"`;
      i = j + 1;
    } else if (ch === "-" && text[i + 1] === "-") {
      const j = text.indexOf("\n", i);
      i = j < 0 ? text.length : j;
    } else if (ch === "/" && text[i + 1] === "*") {
      const j = text.indexOf("*/", i + 2);
      i = j < 0 ? text.length : j + 2;
    } else if (markers === "positional" && ch === "?") {
      out += `$${++count}`;
      i++;
    } else if (markers === "named" && ch === ":" && text[i + 1] === ":") {
      out += "::";
      i += 2;
    } else if (markers === "named" && ch === ":" && /[A-Za-z_]/.test(text[i + 1] ?? "")) {
      const m = /^[A-Za-z0-9_]+/.exec(text.slice(i + 1))!;
      let k = names.indexOf(m[0]);
      if (k < 0) k = names.push(m[0]) - 1;
      out += `$${k + 1}`;
      count++;
      i += 1 + m[0].length;
    } else {
      out += ch;
      i++;
    }
  }
  return { sql: out, count, names };
}

// ---------------------------------------------------------------------------------------------
// Submitted statements

export interface Statement {
  id: string;
  provider: string;
  text: string;
  /** Status polls still answered "running"; Infinity for a statement that never finishes. */
  pending: number;
  cancelled: boolean;
  outcome?: Outcome;
  /** Provider-specific extras (BigQuery location, Snowflake database…). */
  meta: Record<string, unknown>;
}

/** Every statement submitted to any of the fakes, by id, and the tests waiting to see one. */
export function createStatementStore() {
  const statements = new Map<string, Statement>();
  const seenWaiters: { marker: string; resolve: () => void }[] = [];
  return {
    get: (id: string) => statements.get(id),

    remember(provider: string, text: string, pending: number, meta: Record<string, unknown> = {}): Statement {
      const st: Statement = { id: randomUUID(), provider, text, pending, cancelled: false, meta };
      statements.set(st.id, st);
      for (const w of [...seenWaiters]) {
        if (text.includes(w.marker)) {
          seenWaiters.splice(seenWaiters.indexOf(w), 1);
          w.resolve();
        }
      }
      return st;
    },

    /** Resolves once a statement carrying the marker was submitted (no polling in the tests). */
    async seen(marker: string): Promise<void> {
      const already = [...statements.values()].some((s) => s.text.includes(marker));
      if (!already) await new Promise<void>((resolve) => seenWaiters.push({ marker, resolve }));
    },

    /** Whether the first statement carrying the marker was cancelled. */
    cancelled(marker: string): boolean {
      const st = [...statements.values()].find((s) => s.text.includes(marker));
      return st?.cancelled ?? false;
    },

    /** Lets the tests still waiting go, at shutdown. */
    release() {
      for (const w of seenWaiters) w.resolve();
    },
  };
}

export type StatementStore = ReturnType<typeof createStatementStore>;

/** One status poll: true once the statement has finished (never for a cancelled one). */
export function poll(st: Statement): boolean {
  if (st.cancelled) return false;
  if (st.pending > 0) {
    st.pending--;
    return false;
  }
  return true;
}

/** What each fake provider is built with. */
export interface FakeContext {
  /** The one server's base URL; each provider answers under its own prefix. */
  base: string;
  /** PostgreSQL schema of this run, holding table `items`. */
  schema: string;
  run: Run;
  statements: StatementStore;
}
