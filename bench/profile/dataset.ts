/**
 * The benchmark's data set: N rows of mixed types from a seeded PRNG, written once as CSV and
 * as Parquet (hyparquet-writer, row groups of ROW_GROUP_ROWS) with the very same values, and
 * cached under bench/.data/ (gitignored) by row count, seed and generator version.
 */
import { closeSync, existsSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { type ColumnSource, fileWriter, ParquetWriter, schemaFromColumnData } from "hyparquet-writer";
import { seededRandom } from "../support/seeded-random";

/** Bump when the generated values change, so cached files are regenerated. */
const GENERATOR_VERSION = 1;
export const ROW_GROUP_ROWS = 100_000;
export const DEFAULT_SEED = 20240601;

/** The columns, in file order. */
export const COLUMNS = ["id", "email", "amount", "category", "active", "created_at", "score", "comment"] as const;

export interface DataSet {
  rows: number;
  csv: string;
  parquet: string;
  /** Seconds spent generating, or 0 when both files came from the cache. */
  generatedSeconds: number;
}

const FIRST =
  "anna ben carla david emma felix greta hugo ines jonas karin leo mia noah olga paul quinn rosa sven tara uwe vera will xenia yusuf zoe amir bella chen dana elif farid gina hans ivan julia kofi lena marc nina".split(
    " ",
  );
const LAST =
  "schmidt mueller meyer weber wagner becker hoffmann koch richter klein wolf neumann schwarz braun zimmer krueger hartmann lange werner krause martin dubois rossi garcia smith jones brown taylor wilson evans nguyen kim sato silva costa novak horvat nielsen berg lund".split(
    " ",
  );
const DOMAINS = "example.com mail.test corp.example shop.test web.example post.test inbox.test".split(" ");
const CATEGORIES = "books electronics garden toys fashion food sports health music auto".split(" ");
/** Zipf-like weights: a few categories dominate. */
const CATEGORY_CUMULATIVE = (() => {
  const weights = CATEGORIES.map((_, i) => 1 / (i + 1));
  const total = weights.reduce((s, w) => s + w, 0);
  let sum = 0;
  return weights.map((w) => (sum += w / total));
})();
const START_MS = Date.UTC(2024, 0, 1);
const YEAR_MS = 366 * 24 * 3600 * 1000;

function vocabulary(random: () => number): string[] {
  const syllables = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "pra", "sto", "gle", "dri", "fen", "mar"];
  const words = new Set<string>();
  while (words.size < 400) {
    const n = 1 + Math.floor(random() * 3);
    let word = "";
    for (let k = 0; k < n; k++) word += syllables[Math.floor(random() * syllables.length)];
    words.add(word);
  }
  return [...words];
}

/** One row group's values, column by column. */
interface Columns {
  id: BigInt64Array;
  email: string[];
  amount: Float64Array;
  category: string[];
  active: boolean[];
  createdAt: Date[];
  score: Array<number | null>;
  comment: string[];
}

function generateGroup(random: () => number, words: string[], firstId: number, count: number): Columns {
  const group: Columns = {
    id: new BigInt64Array(count),
    email: new Array(count),
    amount: new Float64Array(count),
    category: new Array(count),
    active: new Array(count),
    createdAt: new Array(count),
    score: new Array(count),
    comment: new Array(count),
  };
  const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)]!;
  for (let i = 0; i < count; i++) {
    group.id[i] = BigInt(firstId + i);
    group.email[i] = `${pick(FIRST)}.${pick(LAST)}${Math.floor(random() * 1000)}@${pick(DOMAINS)}`;
    // Log-normal amounts in cents, 3 % refunds as negatives.
    const normal = Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());
    const amount = Math.round(Math.exp(3.5 + normal) * 100) / 100;
    group.amount[i] = random() < 0.03 ? -amount : amount;
    const u = random();
    let c = 0;
    while (CATEGORY_CUMULATIVE[c]! < u && c < CATEGORIES.length - 1) c++;
    group.category[i] = CATEGORIES[c]!;
    group.active[i] = random() < 0.7;
    group.createdAt[i] = new Date(START_MS + Math.floor(random() * YEAR_MS));
    group.score[i] = random() < 0.05 ? null : Math.round(random() * 1000) / 10;
    const n = 2 + Math.floor(random() * 11);
    const parts: string[] = [];
    for (let k = 0; k < n; k++) parts.push(pick(words));
    // Some commas and quotes, so the CSV has quoted fields and doubled quotes.
    if (random() < 0.1) parts.splice(1 + Math.floor(random() * (n - 1)), 0, ",");
    if (random() < 0.02) parts[0] = `"${parts[0]}"`;
    group.comment[i] = parts.join(" ").replace(" ,", ",");
  }
  return group;
}

function csvField(text: string): string {
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvLines(group: Columns): string {
  const lines: string[] = new Array(group.id.length);
  for (let i = 0; i < group.id.length; i++) {
    const score = group.score[i];
    lines[i] = [
      String(group.id[i]),
      csvField(group.email[i]!),
      String(group.amount[i]),
      group.category[i],
      group.active[i] ? "true" : "false",
      group.createdAt[i]!.toISOString(),
      score === null ? "" : String(score),
      csvField(group.comment[i]!),
    ].join(",");
  }
  return `${lines.join("\n")}\n`;
}

function parquetColumns(group: Columns): ColumnSource[] {
  return [
    { name: "id", data: group.id, type: "INT64", nullable: false },
    { name: "email", data: group.email, type: "STRING" },
    { name: "amount", data: group.amount, type: "DOUBLE" },
    { name: "category", data: group.category, type: "STRING" },
    { name: "active", data: group.active, type: "BOOLEAN" },
    { name: "created_at", data: group.createdAt, type: "TIMESTAMP" },
    { name: "score", data: group.score, type: "DOUBLE" },
    { name: "comment", data: group.comment, type: "STRING" },
  ];
}

/** The CSV and Parquet files of `rows` rows, generated on the first call and cached after. */
export function ensureDataSet(dir: string, rows: number, seed = DEFAULT_SEED): DataSet {
  const base = join(dir, `profile-${rows}-s${seed}-v${GENERATOR_VERSION}`);
  const csv = `${base}.csv`;
  const parquet = `${base}.parquet`;
  if (existsSync(csv) && existsSync(parquet)) return { rows, csv, parquet, generatedSeconds: 0 };

  mkdirSync(dir, { recursive: true });
  const started = performance.now();
  // Written under temporary names and renamed at the end: an interrupted run leaves no half file in the cache.
  const csvTmp = `${csv}.tmp`;
  const parquetTmp = `${parquet}.tmp`;
  const random = seededRandom(seed);
  const words = vocabulary(random);
  const csvFd = openSync(csvTmp, "w");
  let writer: ParquetWriter | null = null;
  try {
    writeSync(csvFd, `${COLUMNS.join(",")}\n`);
    for (let start = 0; start < rows; start += ROW_GROUP_ROWS) {
      const count = Math.min(ROW_GROUP_ROWS, rows - start);
      const group = generateGroup(random, words, start + 1, count);
      writeSync(csvFd, csvLines(group));
      const columnData = parquetColumns(group);
      writer ??= new ParquetWriter({ writer: fileWriter(parquetTmp), schema: schemaFromColumnData({ columnData }) });
      writer.write({ columnData, rowGroupSize: ROW_GROUP_ROWS });
    }
    writer?.finish();
  } catch (error) {
    closeSync(csvFd);
    rmSync(csvTmp, { force: true });
    rmSync(parquetTmp, { force: true });
    throw error;
  }
  closeSync(csvFd);
  renameSync(csvTmp, csv);
  renameSync(parquetTmp, parquet);
  return { rows, csv, parquet, generatedSeconds: (performance.now() - started) / 1000 };
}
