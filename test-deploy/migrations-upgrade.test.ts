/**
 * Upgrading a running deployment: a D1 database at an earlier release, holding rows in every
 * table, gets the migrations that came after it, as `wrangler d1 migrations apply --remote` sends
 * them (each file split by wrangler's own splitter, one request per migration, run by D1 as one
 * batch), in the same workerd D1 the deploy test's stand-in serves. No row may be lost or changed.
 *
 * LANDINGS are the releases that reached main, each named by its last migration (from
 * `git log --first-parent main -- migrations/`); the last one is the release being deployed, the
 * one before it the release running now. When a landing adds migrations, add it here.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WorkersRuntime } from "./support/cloudflare/workers";

const LANDINGS = [
  "0000_init.sql", // df55b58 foundation
  "0001_incident_backfills.sql", // bcea971
  "0002_applied_job_freshness.sql", // b5c2fee
  "0003_one_change_one_alert.sql", // fad798e
  "0004_unique_names_and_transitions.sql", // c970db7
  "0005_audit_notifications_key_owner.sql", // 818ef52
  "0006_segments.sql", // eabae4d
  "0007_full_scans_on_spark.sql", // 226a445 spark
  "0009_incident_rollup_triggers.sql", // 875e6da rollups (0008 and 0009 together)
  "0011_incident_tag_rollup_triggers.sql", // 98e246c reads3 (0010 and 0011 together)
  "0012_channel_url_host.sql", // issue 42: a channel's stored url cut to scheme and host
  "0013_asset_monitor_marks.sql", // issue 38: per-asset history in the asset's Durable Object
  // 0014 to 0017 land together: issue 38's tenant shards (0014 directory, moves, fences, id leases;
  // 0015 fence triggers) and alerts in the asset's Durable Object (0016), issue 40's seal ids (0017).
  "0017_seal_ids.sql",
  "0018_audit_tallies.sql", // issue 38: the data plane's audit requests counted per day (decision 0014)
];

const DIR = resolve(import.meta.dirname, "..", "migrations");
const MIGRATIONS = readdirSync(DIR)
  .filter((f) => f.endsWith(".sql"))
  .sort();
const ROWS_PER_TABLE = 3;

let state: string;
let runtime: WorkersRuntime;

beforeAll(() => {
  state = mkdtempSync(join(tmpdir(), "dq-upgrade-"));
  runtime = new WorkersRuntime(state);
});

afterAll(async () => {
  await runtime?.dispose();
  if (state) rmSync(state, { recursive: true, force: true });
});

type Row = Record<string, unknown>;
const q = (db: string, sql: string, params: unknown[] = []) =>
  runtime.query(db, sql, params, false).then((r) => r.at(-1)!.results as Row[]);

/** As wrangler applies a migration remotely: its statements and its record, in one request. */
async function applyMigration(db: string, name: string) {
  const sql = readFileSync(join(DIR, name), "utf8");
  await runtime.query(db, `${sql}\nINSERT INTO d1_migrations (name) values ('${name}');`, [], false);
}

async function migrate(db: string, names: string[]) {
  await runtime.query(
    db,
    "CREATE TABLE IF NOT EXISTS d1_migrations(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL);",
    [],
    false,
  );
  for (const name of names) await applyMigration(db, name);
}

const ident = (name: string) => `"${name.replaceAll('"', '""')}"`;

async function tables(db: string): Promise<string[]> {
  const rows = await q(
    db,
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY name",
  );
  return rows.map((r) => r.name as string);
}

interface Column {
  name: string;
  type: string;
}
interface ForeignKey {
  id: number;
  table: string;
  from: string;
  to: string;
}

/** Tables ordered so that every table comes after the tables its foreign keys reference. */
async function inDependencyOrder(db: string, names: string[]) {
  const fks = new Map<string, ForeignKey[]>();
  for (const t of names) fks.set(t, (await q(db, `PRAGMA foreign_key_list(${ident(t)})`)) as unknown as ForeignKey[]);
  const ordered: string[] = [];
  const visit = (t: string, path: string[]) => {
    if (ordered.includes(t) || path.includes(t)) return;
    for (const fk of fks.get(t) ?? []) if (fk.table !== t) visit(fk.table, [...path, t]);
    ordered.push(t);
  };
  for (const t of names) visit(t, []);
  return { ordered, fks };
}

/** A value a column of this type and name plausibly holds, different for each row. */
function valueFor(table: string, column: Column, i: number): unknown {
  const type = column.type.toUpperCase();
  if (/(_at|_on|^day|date|until|since)$/i.test(column.name)) {
    return new Date(Date.UTC(2026, 10, 1 + i, 8 + i, 30)).toISOString();
  }
  if (type.includes("INT")) return i + 1;
  if (type.includes("REAL") || type.includes("FLOA") || type.includes("DOUB")) return i + 0.5;
  if (type.includes("BLOB")) return new Uint8Array([i, 1, 2, 3]).buffer;
  return `${table}.${column.name}.${i}`;
}

/**
 * Puts ROWS_PER_TABLE rows in every table, parents first; a foreign key's columns take the values
 * of one row of the table it references (agreeing with columns another key already set). A table
 * its triggers already filled (the incident rollups) keeps what the triggers wrote.
 */
async function fillEveryTable(db: string) {
  const { ordered, fks } = await inDependencyOrder(db, await tables(db));
  const rows = new Map<string, Row[]>();
  for (const table of ordered) {
    const already = await q(db, `SELECT count(*) AS n FROM ${ident(table)}`);
    if ((already[0]!.n as number) > 0) continue;
    const columns = (await q(db, `PRAGMA table_info(${ident(table)})`)) as unknown as Column[];
    const keys = new Map<number, ForeignKey[]>();
    for (const fk of fks.get(table) ?? []) keys.set(fk.id, [...(keys.get(fk.id) ?? []), fk]);
    for (let i = 0; i < ROWS_PER_TABLE; i++) {
      const row: Row = Object.fromEntries(columns.map((c) => [c.name, valueFor(table, c, i)]));
      const fixed = new Set<string>();
      for (const parts of keys.values()) {
        const parent = parts[0]!.table;
        const parentRows =
          parent === table ? [] : (rows.get(parent) ?? (await q(db, `SELECT * FROM ${ident(parent)}`)));
        if (parent === table) {
          for (const p of parts) row[p.from] = null;
          continue;
        }
        const agreeing = parentRows.filter((r) => parts.every((p) => !fixed.has(p.from) || r[p.to] === row[p.from]));
        const chosen = agreeing[i % Math.max(agreeing.length, 1)];
        if (!chosen) throw new Error(`${table}: no row of ${parent} agrees with the keys already set`);
        for (const p of parts) {
          row[p.from] = chosen[p.to];
          fixed.add(p.from);
        }
      }
      const names = Object.keys(row);
      await q(
        db,
        `INSERT INTO ${ident(table)} (${names.map(ident).join(", ")}) VALUES (${names.map(() => "?").join(", ")})`,
        names.map((n) => row[n]),
      );
    }
    rows.set(table, await q(db, `SELECT * FROM ${ident(table)}`));
  }
}

/** Every row of every table, by rowid where the table has one. */
async function snapshot(db: string): Promise<Map<string, Row[]>> {
  const out = new Map<string, Row[]>();
  for (const t of await tables(db)) out.set(t, await q(db, `SELECT * FROM ${ident(t)}`));
  return out;
}

const key = (row: Row, columns: string[]) =>
  JSON.stringify(
    columns.map((c) => (row[c] instanceof ArrayBuffer ? [...new Uint8Array(row[c] as ArrayBuffer)] : row[c])),
  );

describe("upgrading a D1 database holding data, landing by landing", () => {
  it("LANDINGS name migrations of migrations/, in order, the last one the newest", () => {
    expect(LANDINGS.every((l) => MIGRATIONS.includes(l))).toBe(true);
    expect([...LANDINGS].sort()).toEqual(LANDINGS);
    expect(LANDINGS.at(-1)).toBe(MIGRATIONS.at(-1));
  });

  it.each(LANDINGS.slice(0, -1).map((landing, n) => [landing, n]))(
    "from the release ending at %s: every table filled, then the rest applied, no row lost",
    async (landing) => {
      const db = `00000000-0000-4000-8000-${String(LANDINGS.indexOf(landing as string)).padStart(12, "0")}`;
      runtime.addDatabase(db);
      const upTo = MIGRATIONS.indexOf(landing as string) + 1;
      await migrate(db, MIGRATIONS.slice(0, upTo));
      await fillEveryTable(db);
      const before = await snapshot(db);
      for (const [table, rows] of before)
        expect(rows.length, `${table} holds rows before the upgrade`).toBeGreaterThan(0);

      for (const name of MIGRATIONS.slice(upTo)) await applyMigration(db, name);

      const after = await snapshot(db);
      for (const [table, rows] of before) {
        expect(after.has(table), `table ${table} is still there`).toBe(true);
        const kept = Object.keys(rows[0]!).filter((c) => c in (after.get(table)![0] ?? {}));
        const now = new Set(after.get(table)!.map((r) => key(r, kept)));
        for (const row of rows) expect(now.has(key(row, kept)), `${table}: ${key(row, kept)}`).toBe(true);
        expect(after.get(table)!.length, `${table}: row count`).toBe(rows.length);
      }
      const applied = await q(db, "SELECT name FROM d1_migrations ORDER BY id");
      expect(applied.map((r) => r.name)).toEqual(MIGRATIONS);

      // Data a migration derives from the rows already there matches them: every incident is in
      // the per-day, per-tag rollup the latest release reads summaries from.
      const incidents = await q(db, "SELECT count(*) AS n FROM incidents");
      const rolled = await q(db, "SELECT coalesce(sum(total), 0) AS n FROM incident_tag_rollups");
      expect(rolled[0]!.n).toBe(incidents[0]!.n);
    },
  );
});
