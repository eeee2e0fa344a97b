/**
 * Type inference from text (CSV fields) and mapping of declared database types, with
 * char-code loops only: no regex, no allocation per value. What a parse finds lands in a
 * ParsedText of the caller's scan (the number, or epoch milliseconds for dates and timestamps,
 * 1/0 for booleans; a number's decimal places; the text's shape).
 */

import type { ValueType } from "../../contracts/profile";

export const T_INTEGER = 0;
export const T_NUMBER = 1;
export const T_BOOLEAN = 2;
export const T_DATE = 3;
export const T_TIMESTAMP = 4;
export const T_STRING = 5;
/** Empty or whitespace-only text. */
export const T_EMPTY = 6;

/** Type codes in VALUE_TYPES order. */
export const TYPE_NAMES: readonly ValueType[] = ["integer", "number", "boolean", "date", "timestamp", "string"];

/**
 * What the last classifyText call given it parsed. Each scan has its own (ProfileScratch), so no
 * other scan's parse can overwrite it before it is read.
 */
export class ParsedText {
  /** The value parsed. */
  readonly value = new Float64Array(1);
  /**
   * Decimal places of the number parsed (T_INTEGER, T_NUMBER): the fraction's digits up to its last
   * non-zero one, less the exponent, at least 0. "2.50" → 1, "1.5e-3" → 4, "1.5e3" → 0. What the
   * numeric step (step.ts) needs, known from the text itself.
   */
  readonly decimals = new Float64Array(1);
  /**
   * The value shape (patterns.ts) of the number text parsed (T_INTEGER, T_NUMBER), as a code: sign
   * (0 none, 1 "-", 2 "+") + 3 × integer digits (0/1) + 6 × point (0/1) + 12 × fraction digits (0/1)
   * + 24 × exponent letter (0 none, 1 "e", 2 "E") + 72 × exponent sign. So "-12.5" → "-9.9" needs no
   * second pass over the text.
   */
  readonly numberShape = new Int32Array(1);
  /**
   * The value shape of the date or timestamp text parsed (T_DATE, T_TIMESTAMP), as a code: 0 a date
   * ("9-9-9"); else 1 + separator (0 "T", 1 "t", 2 " ") + 3 × seconds (0/1) + 6 × fraction (0 none,
   * 1 ".", 2 ",") + 18 × offset (0 none, 1 "Z", 2 "z", 3 "+hh" or "+hhmm", 4 the same with "-", 5
   * "+hh:mm", 6 "-hh:mm").
   */
  readonly timeShape = new Int32Array(1);
}

const MS_PER_DAY = 86_400_000;

/** 10^0 … 10^22, all exact doubles. */
const POWERS_OF_TEN = new Float64Array(23);
for (let k = 0, p = 1; k < 23; k++, p *= 10) POWERS_OF_TEN[k] = p;

function isSpace(c: number): boolean {
  return c === 32 || (c >= 9 && c <= 13) || c === 0xa0 || c === 0xfeff || c === 0x2028 || c === 0x2029;
}

function digitAt(s: string, i: number): number {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
}

/** Two digits at i as a number, or -1. */
function twoDigits(s: string, i: number): number {
  const a = digitAt(s, i);
  const b = digitAt(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = month > 2 ? month - 3 : month + 9;
  const doy = Math.floor((153 * mp + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Parses "YYYY-MM-DD" or an ISO timestamp into `out`; returns T_DATE, T_TIMESTAMP or -1. */
function parseDateTime(s: string, out: ParsedText): number {
  const n = s.length;
  const y1 = twoDigits(s, 0);
  const y2 = twoDigits(s, 2);
  if (y1 < 0 || y2 < 0 || s.charCodeAt(4) !== 45 || s.charCodeAt(7) !== 45) return -1;
  const year = y1 * 100 + y2;
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return -1;
  const days = daysFromCivil(year, month, day);
  if (n === 10) {
    out.value[0] = days * MS_PER_DAY;
    out.timeShape[0] = 0;
    return T_DATE;
  }
  const sep = s.charCodeAt(10);
  if ((sep !== 84 && sep !== 116 && sep !== 32) || n < 16 || s.charCodeAt(13) !== 58) return -1;
  const hour = twoDigits(s, 11);
  const minute = twoDigits(s, 14);
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59) return -1;
  let i = 16;
  let second = 0;
  let millis = 0;
  let shape = 1 + (sep === 84 ? 0 : sep === 116 ? 1 : 2);
  if (i < n && s.charCodeAt(i) === 58) {
    second = twoDigits(s, i + 1);
    if (second < 0 || second > 60) return -1;
    i += 3;
    shape += 3;
    const c = s.charCodeAt(i);
    if (i < n && (c === 46 || c === 44)) {
      shape += c === 46 ? 6 : 12;
      i++;
      let digits = 0;
      let scale = 100;
      for (; i < n; i++) {
        const d = digitAt(s, i);
        if (d < 0) break;
        if (digits < 3) millis += d * scale;
        scale /= 10;
        digits++;
      }
      if (digits === 0) return -1;
    }
  }
  let offsetMinutes = 0;
  if (i < n) {
    const c = s.charCodeAt(i);
    if (c === 90 || c === 122) {
      if (i + 1 !== n) return -1;
      shape += c === 90 ? 18 : 36;
    } else if (c === 43 || c === 45) {
      const oh = twoDigits(s, i + 1);
      if (oh < 0 || oh > 23) return -1;
      i += 3;
      let om = 0;
      shape += c === 43 ? 54 : 72;
      if (i < n) {
        if (s.charCodeAt(i) === 58) {
          i++;
          shape += 36;
        }
        om = twoDigits(s, i);
        if (om < 0 || om > 59 || i + 2 !== n) return -1;
      }
      offsetMinutes = (oh * 60 + om) * (c === 45 ? -1 : 1);
    } else {
      return -1;
    }
  }
  out.timeShape[0] = shape;
  out.value[0] =
    days * MS_PER_DAY + hour * 3_600_000 + minute * 60_000 + second * 1000 + millis - offsetMinutes * 60_000;
  return T_TIMESTAMP;
}

/** Parses an integer or decimal (with exponent) into `out`; returns T_INTEGER, T_NUMBER or T_STRING. */
function parseNumber(s: string, out: ParsedText): number {
  const n = s.length;
  let i = 0;
  const c0 = s.charCodeAt(0);
  const negative = c0 === 45;
  if (negative || c0 === 43) i = 1;
  let digits = 0;
  let value = 0;
  for (; i < n; i++) {
    const d = digitAt(s, i);
    if (d < 0) break;
    value = value * 10 + d;
    digits++;
  }
  let integral = true;
  let fraction = 0;
  // Fraction digits up to the last non-zero one: the places the value needs.
  let places = 0;
  // All digits as one integer (exact up to 15 digits): the fast path below divides it by 10^fraction.
  let mantissa = value;
  if (i < n && s.charCodeAt(i) === 46) {
    integral = false;
    for (i++; i < n; i++) {
      const d = digitAt(s, i);
      if (d < 0) break;
      mantissa = mantissa * 10 + d;
      fraction++;
      if (d !== 0) places = fraction;
    }
  }
  if (digits + fraction === 0) return T_STRING;
  let shape = (negative ? 1 : c0 === 43 ? 2 : 0) + (digits > 0 ? 3 : 0) + (integral ? 0 : 6) + (fraction > 0 ? 12 : 0);
  const plain = i === n;
  if (i < n) {
    const c = s.charCodeAt(i);
    if (c !== 101 && c !== 69) return T_STRING;
    integral = false;
    i++;
    const sign = s.charCodeAt(i);
    shape += (c === 101 ? 24 : 48) + (sign === 45 ? 72 : sign === 43 ? 144 : 0);
    if (sign === 43 || sign === 45) i++;
    let exponentDigits = 0;
    let exponent = 0;
    for (; i < n; i++) {
      const d = digitAt(s, i);
      if (d < 0) break;
      exponent = exponent * 10 + d;
      exponentDigits++;
    }
    if (exponentDigits === 0 || i !== n) return T_STRING;
    places += sign === 45 ? exponent : -exponent;
  }
  out.numberShape[0] = shape;
  if (integral) {
    // Up to 15 digits the running value is exact; beyond, let the engine round correctly.
    out.value[0] = digits <= 15 ? (negative ? -value : value) : Number(s);
    out.decimals[0] = 0;
    return T_INTEGER;
  }
  // Both operands exact doubles, one correctly rounded division: the same double Number(s) gives
  // (Clinger's fast path); longer mantissas and exponents go to the engine.
  if (plain && digits + fraction <= 15) {
    const x = mantissa / POWERS_OF_TEN[fraction]!;
    out.value[0] = negative ? -x : x;
  } else {
    out.value[0] = Number(s);
  }
  out.decimals[0] = Math.max(places, 0);
  return T_NUMBER;
}

function isWord(s: string, word: string): boolean {
  if (s.length !== word.length) return false;
  for (let i = 0; i < s.length; i++) if ((s.charCodeAt(i) | 0x20) !== word.charCodeAt(i)) return false;
  return true;
}

/** Classifies text as one of the T_* codes (T_EMPTY for blank text), parsing into `out`. */
export function classifyText(s: string, out: ParsedText): number {
  const n = s.length;
  if (n === 0) return T_EMPTY;
  const c0 = s.charCodeAt(0);
  if (isSpace(c0)) {
    for (let i = 1; i < n; i++) if (!isSpace(s.charCodeAt(i))) return T_STRING;
    return T_EMPTY;
  }
  if ((c0 >= 48 && c0 <= 57) || c0 === 45 || c0 === 43 || c0 === 46) {
    if (n >= 10 && c0 !== 45 && c0 !== 43 && c0 !== 46 && s.charCodeAt(4) === 45) {
      const t = parseDateTime(s, out);
      if (t >= 0) return t;
    }
    return parseNumber(s, out);
  }
  if (c0 === 116 || c0 === 84) {
    if (isWord(s, "true")) {
      out.value[0] = 1;
      return T_BOOLEAN;
    }
  } else if (c0 === 102 || c0 === 70) {
    if (isWord(s, "false")) {
      out.value[0] = 0;
      return T_BOOLEAN;
    }
  }
  return T_STRING;
}

/** Maps a declared database column type (VARCHAR(20), NUMBER(38,0), timestamptz, …) to a ValueType. */
export function mapDeclaredType(declared: string): ValueType {
  const t = declared.trim().toLowerCase();
  if (t.startsWith("bool")) return "boolean";
  if (t.includes("timestamp") || t.startsWith("datetime")) return "timestamp";
  if (t.startsWith("date")) return "date";
  if (t.startsWith("interval") || t.startsWith("point")) return "string";
  const scaled = /^(number|numeric|decimal|dec)\s*\(\s*\d+\s*(,\s*(\d+)\s*)?\)/.exec(t);
  if (scaled) return scaled[3] === undefined || Number(scaled[3]) === 0 ? "integer" : "number";
  if (/(^|[^a-z])(u?int\d*|integer|bigint|smallint|tinyint|mediumint|byteint|long|short|serial\w*)\b/.test(t)) {
    return "integer";
  }
  if (/decimal|numeric|number|float|double|real|money|bignumeric/.test(t)) return "number";
  return "string";
}

/**
 * True when a value of type `actual` fits an attribute of type `expected`: integers fit
 * numbers, dates fit timestamps, and anything fits a declared text column.
 */
export function fitsType(actual: number, expected: number, declared: boolean): boolean {
  return (
    actual === expected ||
    (actual === T_INTEGER && expected === T_NUMBER) ||
    (actual === T_DATE && expected === T_TIMESTAMP) ||
    (declared && expected === T_STRING)
  );
}
