import { describe, expect, it } from "vitest";
import {
  classifyText,
  mapDeclaredType,
  ParsedText,
  T_BOOLEAN,
  T_DATE,
  T_EMPTY,
  T_INTEGER,
  T_NUMBER,
  T_STRING,
  T_TIMESTAMP,
} from "../../../src/scan/profiler/value-types";
import { prng } from "../../support/random";

const parsed = new ParsedText();

function parse(text: string): [number, number] {
  const t = classifyText(text, parsed);
  return [t, parsed.value[0]!];
}

describe("classifyText", () => {
  it("infers integers, decimals and exponents with their values", () => {
    expect(parse("42")).toEqual([T_INTEGER, 42]);
    expect(parse("-7")).toEqual([T_INTEGER, -7]);
    expect(parse("+5")).toEqual([T_INTEGER, 5]);
    expect(parse("12345678901234567890")).toEqual([T_INTEGER, Number("12345678901234567890")]);
    expect(parse("4.2e1")).toEqual([T_NUMBER, 42]);
    expect(parse("-1.5E-3")).toEqual([T_NUMBER, -0.0015]);
    expect(parse(".5")).toEqual([T_NUMBER, 0.5]);
    expect(parse("3.")).toEqual([T_NUMBER, 3]);
  });

  it("parses decimals to the very double Number() gives (fast path and long mantissas)", () => {
    const random = prng(5);
    const texts = [
      "0.1",
      "-0.0",
      ".5",
      "5.",
      "+1.25",
      "0.000000000000001",
      "9007199254740.993",
      "123456789.0123456789",
    ];
    for (let k = 0; k < 20_000; k++) {
      const digits = 1 + Math.floor(random() * 17);
      const point = Math.floor(random() * (digits + 1));
      let text = random() < 0.3 ? "-" : "";
      for (let d = 0; d < digits; d++) text += `${d === point ? "." : ""}${Math.floor(random() * 10)}`;
      texts.push(text);
    }
    for (const text of texts) {
      expect([T_INTEGER, T_NUMBER]).toContain(classifyText(text, parsed));
      expect(Object.is(parsed.value[0], Number(text)), text).toBe(true);
    }
  });

  it("reports the decimal places a number's text shows", () => {
    const places = (text: string) => {
      classifyText(text, parsed);
      return parsed.decimals[0];
    };
    expect(places("42")).toBe(0);
    expect(places("12345678901234567890")).toBe(0);
    expect(places("0.25")).toBe(2);
    expect(places("-2.50")).toBe(1);
    expect(places("3.")).toBe(0);
    expect(places("7.000")).toBe(0);
    expect(places(".05")).toBe(2);
    expect(places("1.5e-3")).toBe(4);
    expect(places("1.5E+1")).toBe(0);
    expect(places("1.25e1")).toBe(1);
    expect(places("15e2")).toBe(0);
    expect(places("3.14159265")).toBe(8);
  });

  it("infers booleans, dates and timestamps", () => {
    expect(parse("true")).toEqual([T_BOOLEAN, 1]);
    expect(parse("FALSE")).toEqual([T_BOOLEAN, 0]);
    expect(parse("2024-01-02")).toEqual([T_DATE, Date.UTC(2024, 0, 2)]);
    expect(parse("2024-02-29")).toEqual([T_DATE, Date.UTC(2024, 1, 29)]);
    expect(parse("2024-01-02T03:04:05Z")).toEqual([T_TIMESTAMP, Date.UTC(2024, 0, 2, 3, 4, 5)]);
    expect(parse("2024-01-02 03:04:05.678")).toEqual([T_TIMESTAMP, Date.UTC(2024, 0, 2, 3, 4, 5, 678)]);
    expect(parse("2024-01-02T03:04+02:00")).toEqual([T_TIMESTAMP, Date.UTC(2024, 0, 2, 1, 4)]);
    expect(parse("2024-01-02T03:04:05.1234567-0130")).toEqual([T_TIMESTAMP, Date.UTC(2024, 0, 2, 4, 34, 5, 123)]);
    expect(parse("0099-12-31")).toEqual([T_DATE, Date.parse("0099-12-31T00:00:00Z")]);
  });

  it("leaves everything else as strings and spots blank text", () => {
    for (const text of [
      "abc",
      "2023-02-29",
      "2024-13-01",
      "2024-01-02T25:00",
      "1e",
      "1.2.3",
      "-",
      " 42",
      "0x1F",
      "NaN",
    ]) {
      expect(classifyText(text, parsed), text).toBe(T_STRING);
    }
    for (const text of ["", " ", "\t \n"]) expect(classifyText(text, parsed)).toBe(T_EMPTY);
  });
});

describe("mapDeclaredType", () => {
  it("maps database types onto value types", () => {
    expect(mapDeclaredType("INTEGER")).toBe("integer");
    expect(mapDeclaredType("bigint")).toBe("integer");
    expect(mapDeclaredType("NUMBER(38,0)")).toBe("integer");
    expect(mapDeclaredType("NUMERIC(10, 2)")).toBe("number");
    expect(mapDeclaredType("double precision")).toBe("number");
    expect(mapDeclaredType("FLOAT64")).toBe("number");
    expect(mapDeclaredType("boolean")).toBe("boolean");
    expect(mapDeclaredType("DATE")).toBe("date");
    expect(mapDeclaredType("timestamp with time zone")).toBe("timestamp");
    expect(mapDeclaredType("DATETIME")).toBe("timestamp");
    expect(mapDeclaredType("VARCHAR(20)")).toBe("string");
    expect(mapDeclaredType("interval")).toBe("string");
  });
});
