/** Plain-text tables and number formatting for the benchmark's output. */

/** Renders rows under a header, columns padded; columns listed in `right` are right-aligned. */
export function renderTable(header: string[], rows: string[][], right: ReadonlySet<number> = new Set()): string {
  const widths = header.map((h, k) => Math.max(h.length, ...rows.map((r) => (r[k] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, k) => (right.has(k) ? cell.padStart(widths[k]!) : cell.padEnd(widths[k]!)))
      .join("  ")
      .trimEnd();
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...rows.map(line)].join("\n");
}

/** 1234567 → "1,234,567". */
export function grouped(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** A number with `digits` significant digits, without exponent for everyday magnitudes. */
export function significant(n: number, digits = 6): string {
  if (!Number.isFinite(n)) return String(n);
  if (Number.isInteger(n) && Math.abs(n) < 1e15) return String(n);
  const abs = Math.abs(n);
  if (abs !== 0 && (abs < 1e-4 || abs >= 1e15)) return n.toExponential(digits - 1);
  return String(Number(n.toPrecision(digits)));
}

/** Median of a non-empty list. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** "1000000", "1_000_000", "1e6", "1M", "250k" → a positive integer. */
export function parseCount(text: string, what: string): number {
  const m = /^([\d_.e+]+)([kKmM]?)$/.exec(text.trim());
  const n = m ? Number(m[1]!.replaceAll("_", "")) * ({ k: 1e3, m: 1e6 }[m[2]!.toLowerCase()] ?? 1) : Number.NaN;
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`--${what} must be a positive integer, got ${JSON.stringify(text)}`);
  return n;
}
