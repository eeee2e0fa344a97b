import { describe, expect, it } from "vitest";
import { MAX_SCALED, StepTracker } from "../../../src/scan/profiler/step";
import { classifyText, ParsedText } from "../../../src/scan/profiler/value-types";

/** The step of decimal texts, parsed as the CSV profiler parses them. */
function textStep(texts: string[]): number | undefined {
  const tracker = new StepTracker();
  const parsed = new ParsedText();
  for (const text of texts) {
    classifyText(text, parsed);
    tracker.addDecimal(parsed.value[0]!, parsed.decimals[0]!);
  }
  return tracker.step;
}

/** The step of binary floats, as JSON and Parquet deliver them. */
function floatStep(values: number[]): number | undefined {
  const tracker = new StepTracker();
  for (const x of values) tracker.addFloat(x);
  return tracker.step;
}

describe("StepTracker", () => {
  it.each([
    ["prices", [0.5, 1.0, 2.5], 0.5],
    ["integers", [10, 20, 35], 5],
    ["quarters and an integer", [1.25, 2], 0.25],
    ["cents", [19.99, 5.01, 100], 0.01],
    ["negative values and zeros", [-7.5, 0, 15, -0, 2.5], 2.5],
    ["one value", [0.3], 0.3],
    ["millionths", [0.000002, 0.000004], 0.000002],
    ["large multiples", [3e14, 6e14], 3e14],
  ])("finds the grid of %s", (_, values, step) => {
    expect(floatStep(values)).toBe(step);
    expect(textStep(values.map(String))).toBe(step);
  });

  it("does not depend on the order of the values", () => {
    const values = [7.35, 2.1, 0.7, 14, 3.5, 0.105];
    expect(floatStep(values)).toBe(0.035);
    expect(floatStep(values.slice().reverse())).toBe(0.035);
    expect(floatStep([...values.slice(3), ...values.slice(0, 3)])).toBe(0.035);
  });

  it("reads decimal places from the text, trailing zeros and exponents included", () => {
    expect(textStep(["2.50", "1.00"])).toBe(0.5);
    expect(textStep(["1.5e-3", "3e-3"])).toBe(0.0015);
    expect(textStep(["1.5e3", "2e2"])).toBe(100);
    expect(textStep(["10", "25.0"])).toBe(5);
  });

  it("forgives float noise from arithmetic", () => {
    expect(floatStep([0.1 + 0.2, 0.1])).toBe(0.1);
    expect(floatStep([1.1 * 3, 0.3])).toBe(0.3);
  });

  it("gives up past 6 decimal places and for values too large to scale exactly", () => {
    expect(floatStep([1.23456789])).toBeUndefined();
    expect(textStep(["3.14159265"])).toBeUndefined();
    expect(floatStep([0.5, 1 / 3])).toBeUndefined();
    expect(floatStep([1e-7])).toBeUndefined();
    expect(textStep(["1e-7"])).toBeUndefined();
    expect(floatStep([MAX_SCALED])).toBeUndefined();
    expect(textStep(["1000000000000000"])).toBeUndefined();
    // 1e12 is fine alone, but not on a 10^-3 grid: 1e15 once scaled.
    expect(floatStep([1e12])).toBe(1e12);
    expect(floatStep([1e12, 0.001])).toBeUndefined();
    expect(floatStep([0.001, 1e12])).toBeUndefined();
    // Once given up, it stays given up.
    expect(floatStep([Math.PI, 1, 2])).toBeUndefined();
  });

  it("has no step for all zeros or no values, and skips NaN and infinities", () => {
    expect(floatStep([])).toBeUndefined();
    expect(floatStep([0, -0, 0])).toBeUndefined();
    expect(floatStep([Number.NaN, 4, Number.POSITIVE_INFINITY, 6])).toBe(2);
    expect(textStep(["1e999", "0.25"])).toBe(0.25);
  });
});
