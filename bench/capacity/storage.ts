/**
 * bench/capacity: what the local state holds, read from the SQLite files wrangler dev keeps under
 * --persist-to: every D1 database (v3/d1/miniflare-D1DatabaseObject/<id>.sqlite) and every Durable
 * Object (v3/do/<script>-<Class>/<id>.sqlite). Each file is copied with its write-ahead log while the
 * Worker is idle and measured on the copy with SQLite's dbstat: the bytes of the pages each table
 * and index holds, which is what a database's size is made of (free pages are counted apart).
 */
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { DatabaseSync } from "node:sqlite";

/** One SQLite database's pages: bytes per table or index, and its free pages. */
export interface FileMeasure {
  /** Table or index name → bytes of its pages. */
  tables: Map<string, number>;
  /**
   * Table or index name → bytes in use in its pages (page bytes less their unused space): finer
   * than whole pages in a small sample, where a table's last page is far from full.
   */
  inUse: Map<string, number>;
  /** Bytes of every page of the file (page_count × page_size), free pages included. */
  fileBytes: number;
  freeBytes: number;
}

/** The state at one moment: the D1 databases, and the Durable Objects of each class. */
export interface Snapshot {
  name: string;
  /** All D1 databases together (a tenant's rows live in one; the bench runs one tenant). */
  d1: FileMeasure;
  /** The D1 files copied (for replaying statements on them, replay.ts). */
  d1Copies: string[];
  /** Durable Object class → all its objects together, and how many there are. */
  objects: Map<string, FileMeasure & { count: number }>;
}

const sum = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);

/** Bytes of a measure's tables and indexes (whole pages; free pages not counted). */
export const usedBytes = (m: FileMeasure) => sum(m.tables);

/** Bytes in use in those pages. */
export const inUseBytes = (m: FileMeasure) => sum(m.inUse);

function measureFile(path: string): FileMeasure {
  const db = new DatabaseSync(path);
  try {
    const tables = new Map<string, number>();
    const inUse = new Map<string, number>();
    const rows = db.prepare(
      "select name, sum(pgsize) as bytes, sum(pgsize - unused) as used from dbstat group by name",
    );
    for (const row of rows.all()) {
      tables.set(String(row.name), Number(row.bytes));
      inUse.set(String(row.name), Number(row.used));
    }
    const pageSize = Number(db.prepare("pragma page_size").get()!.page_size);
    const pages = Number(db.prepare("pragma page_count").get()!.page_count);
    const free = Number(db.prepare("pragma freelist_count").get()!.freelist_count);
    return { tables, inUse, fileBytes: pages * pageSize, freeBytes: free * pageSize };
  } finally {
    db.close();
  }
}

function addInto(total: FileMeasure, one: FileMeasure) {
  for (const [name, bytes] of one.tables) total.tables.set(name, (total.tables.get(name) ?? 0) + bytes);
  for (const [name, bytes] of one.inUse) total.inUse.set(name, (total.inUse.get(name) ?? 0) + bytes);
  total.fileBytes += one.fileBytes;
  total.freeBytes += one.freeBytes;
}

const emptyMeasure = (): FileMeasure => ({ tables: new Map(), inUse: new Map(), fileBytes: 0, freeBytes: 0 });

/** The databases (not the runtime's metadata.sqlite) in a directory of the state. */
function databasesIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith(".sqlite") && f !== "metadata.sqlite")
    .map((f) => join(dir, f));
}

/** Copies a database with its write-ahead log (not its shared-memory index, rebuilt from the log). */
function copyDatabase(path: string, toDir: string): string {
  mkdirSync(toDir, { recursive: true });
  const to = join(toDir, basename(path));
  copyFileSync(path, to);
  if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, `${to}-wal`);
  return to;
}

/** Sizes and modification times of the state's databases and logs: unchanged while the Worker is idle. */
export function stateSignature(persist: string): string {
  const dirs = [join(persist, "v3", "d1", "miniflare-D1DatabaseObject")];
  const doRoot = join(persist, "v3", "do");
  if (existsSync(doRoot)) for (const d of readdirSync(doRoot)) dirs.push(join(doRoot, d));
  const parts: string[] = [];
  for (const dir of dirs) {
    for (const db of databasesIn(dir)) {
      for (const f of [db, `${db}-wal`]) {
        if (existsSync(f)) {
          const s = statSync(f);
          parts.push(`${f}:${s.size}:${s.mtimeMs}`);
        }
      }
    }
  }
  return parts.join("\n");
}

/** Copies the state's databases into `persist`/snapshots/<name> and measures the copies. */
export function snapshot(persist: string, name: string): Snapshot {
  const into = join(persist, "snapshots", name);
  const d1 = emptyMeasure();
  const d1Copies: string[] = [];
  for (const db of databasesIn(join(persist, "v3", "d1", "miniflare-D1DatabaseObject"))) {
    const copy = copyDatabase(db, join(into, "d1"));
    d1Copies.push(copy);
    addInto(d1, measureFile(copy));
  }
  const objects = new Map<string, FileMeasure & { count: number }>();
  const doRoot = join(persist, "v3", "do");
  if (existsSync(doRoot)) {
    for (const dir of readdirSync(doRoot)) {
      const total = { ...emptyMeasure(), count: 0 };
      for (const db of databasesIn(join(doRoot, dir))) {
        addInto(total, measureFile(copyDatabase(db, join(into, "do", dir))));
        total.count++;
      }
      objects.set(dir, total);
    }
  }
  return { name, d1, d1Copies, objects };
}

/** Every Durable Object class together. */
export function allObjects(s: Snapshot): FileMeasure & { count: number } {
  const total = { ...emptyMeasure(), count: 0 };
  for (const m of s.objects.values()) {
    addInto(total, m);
    total.count += m.count;
  }
  return total;
}
