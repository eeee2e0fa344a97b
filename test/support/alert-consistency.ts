/**
 * Whether an alert's text and its `details` agree (issue 35, point 3): every number of `details`
 * the reader acts on is quoted in the text (within the rounding the text wrote it with), bands are
 * possible for their metric (counts never below 0, shares within 0..1), a quoted p-value supports
 * the alert, and shapes come with their notation. Returns what disagrees; [] when all agrees.
 */

/** An alert as the API returns it (POST …/alerts?job_id=…). */
export interface AlertLike {
  type: string;
  description: string;
  metric: string;
  details: Record<string, any>;
}

/** The significance the drift tests alert at (the policies' default `alpha`). */
const ALPHA = 1e-6;

interface Quote {
  value: number;
  /** Half a unit of the last digit written. */
  tolerance: number;
}

/** Every number of a text, with the precision it was written with ("18.9%" is 0.189 ± 0.0005). */
export function quotes(text: string): Quote[] {
  const out: Quote[] = [];
  for (const m of text.matchAll(/(?<![\w.])(-?\d+(?:\.\d+)?)(?:e([+-]?\d+))?(\s?%)?/gi)) {
    const exponent = m[2] ? Number(m[2]) : 0;
    const decimals = (m[1]!.split(".")[1] ?? "").length;
    const scale = m[3] ? 0.01 : 1;
    out.push({ value: Number(m[1]) * 10 ** exponent * scale, tolerance: 0.5 * 10 ** (exponent - decimals) * scale });
  }
  return out;
}

function quoted(text: string, value: number): boolean {
  return quotes(text).some((q) => Math.abs(q.value - value) <= q.tolerance + 1e-9 * Math.max(1, Math.abs(value)));
}

/** The values a metric can take: counts from 0, shares within 0..1, others anything. */
export function boundsOf(metric: string): { min: number; max: number } {
  if (/(^|:)(row_count|duplicate_count|distinct|non_null|attributes|freshness_age_hours)$/.test(metric)) {
    return { min: 0, max: Number.POSITIVE_INFINITY };
  }
  if (/(_rate|_share|:tail_below|:tail_above|:unique_ratio|:ks|:atom:[^:]*)$/.test(metric)) return { min: 0, max: 1 };
  return { min: Number.NEGATIVE_INFINITY, max: Number.POSITIVE_INFINITY };
}

/** What in `alert` disagrees, in words; [] when its text and details agree. */
export function disagreements(alert: AlertLike): string[] {
  const { description: text, details: d } = alert;
  // The numbers of p-values quote nothing but p-values.
  const figures = text.replace(/\bp [=<] \S+/g, "");
  const out: string[] = [];
  const bounds = boundsOf(alert.metric);
  if (typeof d.observed === "number") {
    if (!quoted(figures, d.observed)) out.push(`observed ${d.observed} is not quoted`);
    if (d.observed < bounds.min || d.observed > bounds.max) out.push(`observed ${d.observed} is impossible`);
  }
  if (d.expected && typeof d.expected === "object") {
    const { low, high } = d.expected as { low: number; high: number };
    if (!(low <= high)) out.push(`band ${low} to ${high} is upside down`);
    if (low < bounds.min || high > bounds.max) out.push(`band ${low} to ${high} is impossible for ${alert.metric}`);
    // A bound at the metric's own limit (a share's 0, a count's 0) needs no quote; any other does.
    for (const bound of [low, high]) {
      if (bound !== bounds.min && bound !== bounds.max && !quoted(figures, bound))
        out.push(`band bound ${bound} is not quoted`);
    }
  }
  const shown = ((d.values ?? []) as Array<Record<string, any>>).slice(0, 5);
  for (const v of shown) {
    const shares =
      v.change === "new" ? [v.observed] : v.change === "vanished" ? [v.expected] : [v.expected, v.observed];
    for (const share of shares) {
      if (!quoted(figures, share)) out.push(`share ${share} of "${v.value}" is not quoted`);
    }
    if (v.p_value !== undefined) {
      if (!(v.p_value < ALPHA)) out.push(`"${v.value}" was found by a test at p = ${v.p_value}`);
      if (v.p_value >= 1e-300 && !quoted(text, v.p_value)) out.push(`p = ${v.p_value} of "${v.value}" is not quoted`);
    }
  }
  // The test a text names is the one that fired, with a value that says so.
  for (const m of text.matchAll(/\bp ([=<]) (\d(?:\.\d+)?e[+-]?\d+)/g)) {
    if (!(Number(m[2]) <= ALPHA)) out.push(`the text quotes p ${m[1]} ${m[2]}, which alerts on nothing`);
  }
  if (/G-test/.test(text) && !shown.some((v) => v.test === "g_test"))
    out.push("the text names a G-test no value passed");
  if (/Poisson/.test(text) && !shown.some((v) => v.test === "poisson"))
    out.push("the text names a Poisson test no value passed");
  const top = (d.investigation ?? [])[0] as Record<string, number> | undefined;
  if (top) {
    const numbers = [top.share_of_problem, top.share_of_rows, top.lift, top.share_of_metric].filter(
      (n) => n !== undefined,
    );
    for (const n of numbers) {
      if (!quoted(figures, n!)) out.push(`investigation figure ${n} is not quoted`);
    }
  }
  // A tail counts values strictly beyond its fence: the extreme the text quotes must be beyond it.
  const tail =
    /are (below|above) (-?\d+(?:\.\d+)?(?:e[+-]?\d+)?) \(the .*; (min|max) (-?\d+(?:\.\d+)?(?:e[+-]?\d+)?)\.?$/.exec(
      text,
    );
  if (tail && /:tail_(below|above)$/.test(alert.metric)) {
    const fence = Number(tail[2]);
    const extreme = Number(tail[4]);
    if (tail[1] === "below" ? !(extreme < fence) : !(extreme > fence))
      out.push(`no value is ${tail[1]} ${tail[2]} (${tail[3]} ${tail[4]})`);
  }
  if (alert.type === "pattern_drift" && !text.includes("A = upper-case letters"))
    out.push("patterns without their notation");
  if (alert.type === "freshness" && d.unit !== "hours") out.push("freshness without its unit");
  return out;
}
