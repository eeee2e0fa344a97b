/**
 * The numeric resolution of an attribute: the grid its values sit on, i.e. the largest s such
 * that every value is an integer multiple of s. With k (0..MAX_DECIMALS) the fewest decimal
 * places that make every value × 10^k an integer, and g the GCD of those integers, s = g / 10^k:
 * prices 0.5, 1.0, 2.5 → 0.5; 10, 20, 35 → 5; 1.25, 2 → 0.25.
 *
 * Streaming in O(1) state: k only grows (the GCD so far is rescaled by 10^Δk), g only shrinks.
 * A value from text brings its decimal places (value-types DECIMALS, no test needed); a binary
 * float is tested by multiply-and-round at the current k, and at larger k only when that fails.
 * It gives up, for good, when a value needs more than MAX_DECIMALS places (3.14159265, 1e-9)
 * or a scaled value reaches MAX_SCALED (1e15), past which doubles cannot be trusted to hold
 * the exact integers a GCD needs.
 */

export const MAX_DECIMALS = 6;
/** Bound on |value| × 10^k: below 2^53 / 9, so every scaled value and its rescaling stay exact. */
export const MAX_SCALED = 1e15;

const POW10 = [1, 10, 100, 1e3, 1e4, 1e5, 1e6] as const;
/**
 * Float noise forgiven in a scaled float: 2^12 ulps (0.1 + 0.2 sits on the 0.1 grid), but never
 * more than a thousandth of a grid unit, so that a large value cannot pass by tolerance alone.
 */
const RELATIVE_TOLERANCE = 2 ** -40;
const MAX_TOLERANCE = 1e-3;

export class StepTracker {
  /** k: decimal places so far. */
  private places = 0;
  /** g: GCD of |value| × 10^k so far (0 while every value was 0). */
  private gcd = 0;
  /** Largest |value| so far, to check that rescaling keeps every scaled value below MAX_SCALED. */
  private maxAbs = 0;
  private gaveUp = false;

  /** A value parsed from decimal text, with the decimal places its text shows. */
  addDecimal(x: number, places: number): void {
    if (this.gaveUp || !Number.isFinite(x)) return;
    if (places > this.places && !this.rescale(places)) return;
    // The decimal text is exact, so x × 10^k is within 2^-52 relative of the integer: rounding finds it.
    const abs = Math.abs(x);
    this.addScaled(Math.round(abs * POW10[this.places]!), abs);
  }

  /** A binary floating-point value (JSON, Parquet): its places found by multiply-and-round tests. */
  addFloat(x: number): void {
    if (this.gaveUp || !Number.isFinite(x)) return;
    const abs = Math.abs(x);
    for (let k = this.places; k <= MAX_DECIMALS; k++) {
      const y = abs * POW10[k]!;
      if (y >= MAX_SCALED) break;
      const m = Math.round(y);
      if (Math.abs(y - m) <= Math.min(y * RELATIVE_TOLERANCE, MAX_TOLERANCE)) {
        if (k > this.places && !this.rescale(k)) return;
        this.addScaled(m, abs);
        return;
      }
    }
    this.gaveUp = true;
  }

  /** The step, or undefined when it gave up or saw no non-zero value. */
  get step(): number | undefined {
    if (this.gaveUp || this.gcd === 0) return undefined;
    return this.gcd / POW10[this.places]!;
  }

  private addScaled(m: number, abs: number): void {
    if (m >= MAX_SCALED) {
      this.gaveUp = true;
      return;
    }
    if (abs > this.maxAbs) this.maxAbs = abs;
    // Once 1, the GCD stays 1 until a rescale: most integer and cent columns skip the division.
    if (this.gcd !== 1) this.gcd = gcd(this.gcd, m);
  }

  /** Moves to k places: the GCD of the scaled values so far scales along. False when it gave up. */
  private rescale(k: number): boolean {
    if (k > MAX_DECIMALS || this.maxAbs * POW10[k]! >= MAX_SCALED) {
      this.gaveUp = true;
      return false;
    }
    this.gcd *= POW10[k - this.places]!;
    this.places = k;
    return true;
  }
}

/** Greatest common divisor of two non-negative integers held exactly in doubles. */
function gcd(a: number, b: number): number {
  while (b !== 0) {
    const r = a % b;
    a = b;
    b = r;
  }
  return a;
}
