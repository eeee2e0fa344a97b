import { describe, expect, it } from "vitest";
import { checkHybrid, prefixedEnd } from "../../../src/scan/formats/parquet-guard";

describe("checkHybrid", () => {
  // 1-bit values: an RLE run of 5 ones (header 5 << 1, value 1), then one bit-packed group of 8 (header 1 << 1 | 1).
  const runs = Uint8Array.from([0x0a, 0x01, 0x03, 0b10101010]);

  it("passes runs that decode the page's values, a last bit-packed group padding past them", () => {
    expect(() => checkHybrid(runs, 0, runs.length, 1, 13)).not.toThrow();
    expect(() => checkHybrid(runs, 0, runs.length, 1, 6)).not.toThrow();
    // Ending before the values is left to the decoder, which fails reading past the end.
    expect(() => checkHybrid(runs, 0, runs.length, 1, 40)).not.toThrow();
    // DuckDB ends a page's levels with a bit-packed run of 32 groups (256 values) for its last 30:
    // the run's 32 bytes lie in the stream, so they bound what it decodes.
    const lastRun = Uint8Array.from([(32 << 1) | 1, ...new Array(32).fill(0xff)]);
    expect(() => checkHybrid(lastRun, 0, lastRun.length, 1, 30)).not.toThrow();
    // A bit-packed run of 0-bit values has no bytes to bound it: past the padding it is refused.
    expect(() => checkHybrid(Uint8Array.from([(32 << 1) | 1]), 0, 1, 0, 30)).toThrow(/more than the page's 30 values/);
  });

  it("refuses runs claiming more values than the page holds, or bytes past its end", () => {
    // An RLE run of 20 where the page holds 4 (past a bit-packed group's padding of 7).
    expect(() => checkHybrid(Uint8Array.from([0x28, 0x01]), 0, 2, 1, 4)).toThrow(/more than the page's 4 values/);
    // An RLE run of 2^30 (header 2^31 as a 5-byte varint).
    const huge = Uint8Array.from([0x80, 0x80, 0x80, 0x80, 0x08, 0x01]);
    expect(() => checkHybrid(huge, 0, huge.length, 1, 1000)).toThrow(/more than the page's 1000 values/);
    // A bit-packed run of 2 groups of 8-bit values needs 16 bytes.
    const short = Uint8Array.from([0x05, 1, 2, 3]);
    expect(() => checkHybrid(short, 0, short.length, 8, 16)).toThrow(/run past the page/);
    // A header whose group count is negative in 32 bits.
    const negative = Uint8Array.from([0xff, 0xff, 0xff, 0xff, 0x0f]);
    expect(() => checkHybrid(negative, 0, negative.length, 1, 1000)).toThrow(/negative length/);
  });

  it("refuses bounds that are not offsets in the page (a header field missing) and widths past 32", () => {
    expect(() => checkHybrid(runs, undefined as unknown as number, runs.length, 1, 13)).toThrow(/lie outside the page/);
    expect(() => checkHybrid(runs, 0, Number.NaN, 1, 13)).toThrow(/lie outside the page/);
    expect(() => checkHybrid(runs, 0, runs.length + 1, 1, 13)).toThrow(/lie outside the page/);
    expect(() => checkHybrid(runs, 0, runs.length, 33, 13)).toThrow(/bit width of 33/);
  });

  it("reads a v1 stream's 4-byte length and checks it fits the page", () => {
    expect(prefixedEnd(Uint8Array.from([2, 0, 0, 0, 9, 9, 9]), 0)).toBe(6);
    expect(() => prefixedEnd(Uint8Array.from([9, 0, 0, 0, 1]), 0)).toThrow(/run past the page/);
    expect(() => prefixedEnd(Uint8Array.from([1, 0]), 0)).toThrow(/ends before/);
  });
});
