import { describe, expect, it } from "vitest";
import {
  MAX_PATTERN_LENGTH,
  PatternCounter,
  PatternScratch,
  SLOT_DECIMAL,
  SLOT_INTEGER,
  SLOT_ISO_TIMESTAMP,
  SLOT_LETTERS,
  SLOT_NEGATIVE_DECIMAL,
  SLOT_NEGATIVE_INTEGER,
  shapeOf,
} from "../../../src/scan/profiler/patterns";
import {
  classifyText,
  ParsedText,
  T_DATE,
  T_INTEGER,
  T_NUMBER,
  T_TIMESTAMP,
} from "../../../src/scan/profiler/value-types";
import { viaJson } from "./via-json";

describe("shapeOf", () => {
  it("maps letters, digits and keeps other characters, collapsing runs", () => {
    expect(shapeOf("john.doe@example.com")).toBe("a.a@a.a");
    expect(shapeOf("AB-1234")).toBe("A-9");
    expect(shapeOf("Hello World 42!")).toBe("Aa Aa 9!");
    expect(shapeOf("2024-01-02")).toBe("9-9-9");
    expect(shapeOf("Émile Zoë")).toBe("Aa Aa");
    expect(shapeOf("a--b")).toBe("a-a");
    expect(shapeOf("")).toBe("");
  });

  it("gives number text the shape its parse found, as shapeOf does", () => {
    const texts = ["0", "42", "-7", "+3", "3.25", "-0.5", "+.5", ".5", "5.", "1e5", "1E-5", "-1.5e+3", "007", "12.50"];
    for (const text of texts) {
      const parsed = new ParsedText();
      expect([T_INTEGER, T_NUMBER]).toContain(classifyText(text, parsed));
      const counter = new PatternCounter(new PatternScratch());
      counter.tallyNumber(parsed.numberShape[0]!, 2);
      counter.flushTally();
      expect(counter.top(1), text).toEqual([{ pattern: shapeOf(text), share: 1 }]);
    }
  });

  it("gives date and timestamp text the shape its parse found, as shapeOf does", () => {
    const texts = [
      "2024-01-02",
      "2024-01-02T10:00",
      "2024-01-02t10:00:00",
      "2024-01-02 10:00:00.123",
      "2024-01-02T10:00:00,5Z",
      "2024-01-02T10:00:00z",
      "2024-01-02T10:00+01",
      "2024-01-02T10:00:00-0130",
      "2024-01-02T10:00:00.1+01:00",
      "2024-01-02 10:00-05:00",
    ];
    for (const text of texts) {
      const parsed = new ParsedText();
      expect([T_DATE, T_TIMESTAMP]).toContain(classifyText(text, parsed));
      const counter = new PatternCounter(new PatternScratch());
      counter.tallyTime(parsed.timeShape[0]!, 1);
      counter.flushTally();
      expect(counter.top(1), text).toEqual([{ pattern: shapeOf(text), share: 1 }]);
    }
  });

  it("tallies typed values under the shapes their text has", () => {
    const shapes: Array<[number, string]> = [
      [SLOT_INTEGER, shapeOf("42")],
      [SLOT_NEGATIVE_INTEGER, shapeOf("-42")],
      [SLOT_DECIMAL, shapeOf("4.2")],
      [SLOT_NEGATIVE_DECIMAL, shapeOf("-4.2")],
      [SLOT_ISO_TIMESTAMP, shapeOf(new Date(0).toISOString())],
      [SLOT_LETTERS, shapeOf("true")],
    ];
    const scratch = new PatternScratch();
    const counter = new PatternCounter(scratch);
    shapes.forEach(([slot], k) => {
      counter.tally(slot, k + 1);
    });
    // The tally is shared within a scan: another counter's tally first hands this one's shapes to its summary.
    const other = new PatternCounter(scratch);
    other.tally(SLOT_INTEGER, 5);
    expect(other.top(10)).toEqual([{ pattern: "9", share: 1 }]);
    expect(counter.top(10)).toEqual(
      shapes.map(([, pattern], k) => ({ pattern, share: (k + 1) / 21 })).sort((a, b) => b.share - a.share),
    );
  });

  it("cuts long shapes with an ellipsis", () => {
    const shape = shapeOf("a1".repeat(100));
    expect(shape.length).toBe(MAX_PATTERN_LENGTH + 1);
    expect(shape.endsWith("…")).toBe(true);
  });
});

describe("PatternCounter", () => {
  it("reports the shares of the top shapes", () => {
    const counter = new PatternCounter(new PatternScratch());
    for (const v of ["a@b.com", "x@y.org", "AB-12", "CD-34", "EF-56", "free text"]) counter.addText(v);
    expect(counter.top(20)).toEqual([
      { pattern: "A-9", share: 0.5 },
      { pattern: "a@a.a", share: 2 / 6 },
      { pattern: "a a", share: 1 / 6 },
    ]);
  });

  it("merges and round-trips", () => {
    const scratch = new PatternScratch();
    const a = new PatternCounter(scratch);
    const b = new PatternCounter(scratch);
    const whole = new PatternCounter(scratch);
    ["AB-1", "ab", "AB-2", "12", "x.y"].forEach((v, i) => {
      (i % 2 ? a : b).addText(v);
      whole.addText(v);
    });
    a.merge(b);
    expect(a.top(20)).toEqual(whole.top(20));
    expect(PatternCounter.fromState(viaJson(a.toState()), scratch).top(20)).toEqual(whole.top(20));
  });
});
