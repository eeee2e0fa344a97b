/**
 * The statistics the policies judge shares and distributions with: tests that know how many rows
 * a share was measured on, so 1 % of 10,000 rows is evidence and 1 % of 50 rows is not.
 *
 * - Wilson score interval of a binomial share (Wilson 1927): the share's plausible range at z.
 * - G-test of counts against expected shares (the log-likelihood ratio form of Pearson's
 *   chi-square), with the chi-square tail by the Wilson–Hilferty approximation.
 * - Kolmogorov–Smirnov critical distance for two samples of n and m values.
 * - Dispersion of counts over several samples (quasi-likelihood, McCullagh & Nelder 1989 §4.5):
 *   how many times the variance that sampling alone gives the samples' shares actually have.
 */

/** The Wilson score interval of k successes in n trials at z standard errors. */
export function wilson(k: number, n: number, z: number): { low: number; high: number } {
  if (!(n > 0)) return { low: 0, high: 1 };
  const p = Math.min(1, Math.max(0, k / n));
  const z2 = z * z;
  const centre = (p + z2 / (2 * n)) / (1 + z2 / n);
  const half = (z / (1 + z2 / n)) * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n));
  return { low: Math.max(0, centre - half), high: Math.min(1, centre + half) };
}

/**
 * G statistic of observed counts against expected shares (which need not sum to exactly 1; they
 * are normalised), over the categories with an expected share above 0; a count where nothing was
 * expected is judged by the new-category rule instead.
 */
export function gStatistic(observed: readonly number[], expectedShares: readonly number[]): { g: number; df: number } {
  let total = 0;
  let shareSum = 0;
  for (let i = 0; i < observed.length; i++) {
    if (expectedShares[i]! > 0) {
      total += observed[i]!;
      shareSum += expectedShares[i]!;
    }
  }
  if (total <= 0 || shareSum <= 0) return { g: 0, df: 0 };
  let g = 0;
  let df = -1;
  for (let i = 0; i < observed.length; i++) {
    const share = expectedShares[i]!;
    if (!(share > 0)) continue;
    df++;
    const o = observed[i]!;
    const e = (total * share) / shareSum;
    if (o > 0) g += o * Math.log(o / e);
  }
  return { g: 2 * g, df: Math.max(df, 0) };
}

/**
 * The dispersion φ of a table of counts (one row per sample, one column per category): Pearson's
 * chi-square of homogeneity over its degrees of freedom, (rows − 1)(columns − 1), the moment
 * estimate of how many times the binomial variance the samples' shares vary by. Real batches are
 * not draws from one fixed distribution: a year of birdstrikes moves its airlines' shares 3–4
 * times as far as its row count alone would. Columns with no count are left out; 1 when the table
 * has fewer than 2 rows or columns (nothing to estimate from).
 */
export function countDispersion(table: readonly (readonly number[])[]): { phi: number; df: number } {
  const rows = table.filter((r) => r.reduce((s, v) => s + v, 0) > 0);
  if (rows.length < 2) return { phi: 1, df: 0 };
  const width = Math.max(...rows.map((r) => r.length));
  const rowSums = rows.map((r) => r.reduce((s, v) => s + v, 0));
  const total = rowSums.reduce((s, v) => s + v, 0);
  const colSums = Array.from({ length: width }, (_, j) => rows.reduce((s, r) => s + (r[j] ?? 0), 0));
  const cols = colSums.flatMap((c, j) => (c > 0 ? [j] : []));
  if (cols.length < 2) return { phi: 1, df: 0 };
  let x2 = 0;
  for (const [i, r] of rows.entries()) {
    for (const j of cols) {
      const e = (rowSums[i]! * colSums[j]!) / total;
      x2 += ((r[j] ?? 0) - e) ** 2 / e;
    }
  }
  const df = (rows.length - 1) * (cols.length - 1);
  return { phi: x2 / df, df };
}

/**
 * Upper tail P(X > x) of a chi-square distribution with df degrees of freedom, by the
 * Wilson–Hilferty cube-root normal approximation (good to a few percent of the p-value down to
 * the tiny tails the policies use).
 */
export function chiSquareTail(x: number, df: number): number {
  if (df <= 0) return 1;
  if (x <= 0) return 1;
  const v = 2 / (9 * df);
  const z = ((x / df) ** (1 / 3) - (1 - v)) / Math.sqrt(v);
  return normalTail(z);
}

/** Upper tail of the standard normal distribution (Abramowitz & Stegun 26.2.17, |error| < 7.5e-8). */
export function normalTail(z: number): number {
  if (z < 0) return 1 - normalTail(-z);
  const t = 1 / (1 + 0.2316419 * z);
  const poly = t * (0.31938153 + t * (-0.356563782 + t * (1.781477937 + t * (-1.821255978 + t * 1.330274429))));
  return Math.exp((-z * z) / 2) * 0.3989422804014327 * poly;
}

/**
 * The two-sample Kolmogorov–Smirnov distance beyond which two samples of n and m values differ
 * at significance alpha: c(α)·√((n + m)/(n·m)), c(α) = √(−ln(α/2)/2).
 */
export function ksCritical(n: number, m: number, alpha: number): number {
  if (!(n > 0) || !(m > 0)) return 1;
  return Math.sqrt(-Math.log(alpha / 2) / 2) * Math.sqrt((n + m) / (n * m));
}

/** ln(k!) (exact sum up to 50, Stirling's series beyond: error below 1e-10). */
function logFactorial(k: number): number {
  if (k <= 50) {
    let s = 0;
    for (let i = 2; i <= k; i++) s += Math.log(i);
    return s;
  }
  return k * Math.log(k) - k + 0.5 * Math.log(2 * Math.PI * k) + 1 / (12 * k) - 1 / (360 * k ** 3);
}

/** Upper tail P(X ≥ k) of a Poisson count with mean λ, summed from k up (1 when k ≤ λ). */
export function poissonTail(k: number, lambda: number): number {
  if (k <= lambda) return 1;
  if (!(lambda > 0)) return 0;
  let term = Math.exp(-lambda + k * Math.log(lambda) - logFactorial(k));
  let sum = 0;
  for (let i = k; term > sum * 1e-15 && i < k + 100_000; i++) {
    sum += term;
    term *= lambda / (i + 1);
  }
  return Math.min(1, sum);
}
