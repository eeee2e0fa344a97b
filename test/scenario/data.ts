import { prng } from "../support/random";
/** The problems the scenario injects, one scan at a time. */
export type Problem = "null_spike" | "row_drop" | "dropped_column" | "duplicate_ids" | "stale" | "pattern_change";

export interface Order {
  id: number;
  email: string | null;
  amount: number;
  country: string;
  updated_at: string;
}

const COUNTRIES = ["FR", "DE", "US", "GB", "ES", "IT"];
const WORDS = ["please", "call", "me", "back", "about", "the", "order", "thanks", "asap", "later"];

/**
 * One scan's rows of an `orders` table: about 1,000 clean rows (small seeded noise), or the
 * same with one real problem injected.
 */
export function orders(scan: number, now: Date, problem?: Problem): Order[] {
  const rand = prng(1000 + scan);
  let n = 1000 + Math.floor(rand() * 40) - 20;
  if (problem === "row_drop") n = Math.floor(n * 0.4);
  const rows: Order[] = [];
  for (let i = 0; i < n; i++) {
    const id = scan * 100_000 + i;
    // Unique by construction, so uniqueness of e-mails is a stable fact of the clean data.
    let email: string | null = `user${id}@example.com`;
    if (problem === "null_spike" && rand() < 0.4) email = null;
    // Free text, still one value per row: only the shape of the values changes.
    if (problem === "pattern_change") email = `${WORDS[i % 10]} ${WORDS[(i * 3) % 10]} ${WORDS[(i * 7) % 10]} ${id}`;
    const ageMinutes = problem === "stale" ? 3 * 24 * 60 + rand() * 600 : rand() * 50;
    rows.push({
      id: problem === "duplicate_ids" && i % 10 === 0 && i > 0 ? id - 1 : id,
      email,
      amount: Math.round((50 + 20 * (rand() + rand() + rand() - 1.5)) * 100) / 100,
      country: COUNTRIES[Math.floor(rand() * COUNTRIES.length)]!,
      updated_at: new Date(now.getTime() - ageMinutes * 60_000).toISOString(),
    });
  }
  return rows;
}

/** Rows as CSV text; `dropped_column` leaves out `country`. */
export function toCsv(rows: Order[], problem?: Problem): string {
  const columns = (["id", "email", "amount", "country", "updated_at"] as const).filter(
    (c) => !(problem === "dropped_column" && c === "country"),
  );
  const lines = [columns.join(",")];
  for (const r of rows) lines.push(columns.map((c) => (r[c] === null ? "" : String(r[c]))).join(","));
  return `${lines.join("\n")}\n`;
}
