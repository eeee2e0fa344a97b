import { describe, expect, it } from "vitest";
import { PlainTextScratch, readPlainText } from "../../../src/scan/formats/parquet-text";

/** Byte arrays as a PLAIN page holds them: each a 4-byte little-endian length, then its bytes. */
function plain(values: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(values.reduce((sum, value) => sum + 4 + value.length, 0));
  const view = new DataView(out.buffer);
  let at = 0;
  for (const value of values) {
    view.setUint32(at, value.length, true);
    out.set(value, at + 4);
    at += 4 + value.length;
  }
  return out;
}

const utf8 = (text: string) => new TextEncoder().encode(text);
const bytes = (...b: number[]) => new Uint8Array(b);
/** What hyparquet's default parser gives for each value. */
const perValue = (values: Uint8Array[]) => values.map((value) => new TextDecoder().decode(value));

function expectAsPerValue(values: Uint8Array[]): void {
  const read = readPlainText(plain(values), values.length, new PlainTextScratch());
  expect(read).toEqual(perValue(values));
}

describe("readPlainText", () => {
  it("reads ASCII, empty and multi-byte values (2, 3 and 4 bytes a character)", () => {
    expectAsPerValue(["", "a", "alice@example.com", "", "x".repeat(300)].map(utf8));
    expectAsPerValue(["é", "name ✓", "", "😀 emoji 😀", "ascii", "𝄞x✓é"].map(utf8));
    // Lengths whose bytes have the high bit set (200 = 0xc8) after values of 1 to 5 bytes.
    expectAsPerValue(
      ["a", "x".repeat(200), "ab", "y".repeat(130), "abc", "z".repeat(255), "abcd", "w".repeat(200), "abcde"].map(utf8),
    );
  });

  it("gives what a decoder per value gives for bytes that are not valid UTF-8 on their own", () => {
    const cases: Uint8Array[][] = [
      // A character split over two values: each half is a replacement character, not "é".
      [bytes(0x61, 0xc3), bytes(0xa9, 0x62)],
      // A BOM the per-value decoder drops at the start of a value, keeps elsewhere.
      [bytes(0xef, 0xbb, 0xbf, 0x61), utf8("b\ufeffc"), utf8("✓")],
      [bytes(0xff), bytes(0xc0, 0x80), bytes(0xed, 0xa0, 0x80), utf8("ok ✓"), bytes(0xe2, 0x9c)],
      [utf8("✓"), bytes(0xe2, 0x9c)],
    ];
    for (const values of cases) expectAsPerValue(values);
  });

  it("reads values across 64 KiB segments, one value larger than a segment, ASCII and not", () => {
    const values: Uint8Array[] = [];
    for (let i = 0; i < 12_000; i++) {
      const text = i % 5000 === 7 ? `big ${"y".repeat(200_000)} ✓` : i > 6000 && i % 97 === 0 ? `é ${i}` : `v${i}`;
      values.push(utf8(text.repeat(1 + (i % 3))));
    }
    values.push(bytes(0xc3));
    expectAsPerValue(values);
  });

  it("matches a decoder per value on random bytes", () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    // Mostly ASCII, with lead and continuation bytes, BOM bytes and bytes never valid.
    const alphabet = [
      0x61, 0x62, 0x20, 0x00, 0xc3, 0xa9, 0xe2, 0x9c, 0x93, 0xf0, 0x9f, 0x98, 0x80, 0xef, 0xbb, 0xbf, 0xff,
    ];
    for (let round = 0; round < 20; round++) {
      const values = Array.from({ length: 500 }, () =>
        Uint8Array.from({ length: next() % 12 }, () => alphabet[next() % alphabet.length]!),
      );
      expectAsPerValue(values);
    }
  });

  it("fails on a length that runs past the page", () => {
    const page = plain([utf8("abc")]);
    expect(() => readPlainText(page.subarray(0, 5), 1, new PlainTextScratch())).toThrow(/past the page/);
    expect(() => readPlainText(page, 2, new PlainTextScratch())).toThrow(/past the page/);
  });
});
