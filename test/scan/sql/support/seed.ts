/** The seeded table of the profile tests: known nulls, empties, duplicates, distributions and shapes. */

export const BASE_TIME = Date.UTC(2024, 0, 1);
export const ROWS = 60;
const TEXTS = ["Call me later", "no email given", "Ask Bob"];

export interface SeedRow {
  id: number;
  amount: number | null;
  score: number;
  email: string | null;
  code: string;
  country: string;
  created_at: string;
  active: boolean;
}

export function seedRows(): SeedRow[] {
  return Array.from({ length: ROWS }, (_, i) => ({
    // The last three rows repeat ids 1-3 (with the same country): three duplicates.
    id: i < ROWS - 3 ? i + 1 : i - (ROWS - 3) + 1,
    amount: i % 10 === 0 ? null : ((i * 37) % 101) + 0.25,
    score: i * 1.5 - 10,
    email:
      i % 15 === 0
        ? null
        : i % 15 === 1
          ? ""
          : i % 15 === 2
            ? "   "
            : i % 5 === 3
              ? TEXTS[i % 3]!
              : `user${i}@example.com`,
    code: i % 6 === 0 ? "n/a" : String(1000 + i),
    country: ["US", "DE", "FR"][i % 3]!,
    created_at: new Date(BASE_TIME + i * 3_600_000).toISOString(),
    active: i % 4 === 0,
  }));
}

export const DDL = {
  postgres: (t: string) =>
    `CREATE TABLE "${t}" (id integer NOT NULL, amount numeric(10,2), score double precision, email varchar(100), code varchar(20), country varchar(2), created_at timestamp, active boolean)`,
  mysql: (t: string) =>
    `CREATE TABLE \`${t}\` (id INT NOT NULL, amount DECIMAL(10,2), score DOUBLE, email VARCHAR(100), code VARCHAR(20), country VARCHAR(2), created_at DATETIME, active TINYINT(1))`,
};

export const COLUMNS = ["id", "amount", "score", "email", "code", "country", "created_at", "active"] as const;

/** Mean and sample standard deviation (n − 1, as SQL's STDDEV_SAMP and the Worker's file profiler). */
export function meanStddev(values: number[]): { mean: number; stddev: number } {
  const mean = values.reduce((a, b) => a + b, 0) / values.length;
  const variance = values.reduce((a, b) => a + (b - mean) ** 2, 0) / (values.length - 1);
  return { mean, stddev: Math.sqrt(variance) };
}
