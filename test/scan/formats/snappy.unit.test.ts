import { snappyUncompress as reference } from "hyparquet/src/snappy.js";
import { snappyCompress } from "hyparquet-writer/src/snappy.js";
import { describe, expect, it } from "vitest";
import { snappyUncompress } from "../../../src/scan/formats/snappy";

/** What hyparquet's own decoder gives. */
function expected(input: Uint8Array, length: number): Uint8Array {
  const out = new Uint8Array(length);
  reference(input, out);
  return out;
}

/** A raw block by hand: the varint length, then the elements' bytes. */
function block(length: number, ...elements: number[][]): Uint8Array {
  const varint: number[] = [];
  for (let n = length; ; n >>>= 7) {
    if (n < 0x80) {
      varint.push(n);
      break;
    }
    varint.push((n & 0x7f) | 0x80);
  }
  return new Uint8Array([...varint, ...elements.flat()]);
}
const literal = (bytes: number[]) =>
  bytes.length <= 60
    ? [(bytes.length - 1) << 2, ...bytes]
    : [61 << 2, (bytes.length - 1) & 0xff, (bytes.length - 1) >> 8, ...bytes];
/** A copy with a 1-byte offset (4–11 bytes, offset < 2048), a 2-byte one, a 4-byte one. */
const copy1 = (length: number, offset: number) => [1 | ((length - 4) << 2) | ((offset >> 8) << 5), offset & 0xff];
const copy2 = (length: number, offset: number) => [2 | ((length - 1) << 2), offset & 0xff, offset >> 8];
const copy4 = (length: number, offset: number) => [3 | ((length - 1) << 2), offset & 0xff, (offset >> 8) & 0xff, 0, 0];

describe("snappyUncompress", () => {
  it("decompresses what hyparquet-writer compresses, as hyparquet's decoder does", () => {
    let seed = 3;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const texts = [
      "",
      "a",
      "abcabcabcabcabcabcabcabcabc",
      Array.from({ length: 3000 }, (_, i) => `user${next() % 5000}@example.com,${i % 7},`).join(""),
      "x".repeat(20_000),
    ];
    const inputs = texts.map((text) => new TextEncoder().encode(text));
    // Random bytes (long literals) and short random runs (many short copies and literals).
    inputs.push(Uint8Array.from({ length: 20_000 }, () => next() & 0xff));
    inputs.push(Uint8Array.from({ length: 20_000 }, (_, i) => (i % 13 < 5 ? next() & 3 : (i * 7) & 0xff)));
    for (const input of inputs) {
      const compressed = snappyCompress(input);
      const out = snappyUncompress(compressed, input.length);
      expect(out).toEqual(input);
      expect(out).toEqual(expected(compressed, input.length));
    }
  });

  it("repeats patterns of copies whose offset is shorter than their length, and reads every element form", () => {
    const cases: Array<[number, number[][]]> = [
      [12, [literal([1]), copy1(11, 1)]],
      [13, [literal([1, 2]), copy1(11, 2)]],
      [15, [literal([1, 2, 3]), copy2(12, 3)]],
      [26, [literal([1, 2, 3, 4, 5]), copy2(21, 5)]],
      [70, [literal([9, 8, 7, 6, 5, 4, 3]), copy2(63, 7)]],
      [200, [literal(Array.from({ length: 100 }, (_, i) => i)), copy4(64, 100), copy4(36, 37)]],
      [10, [literal([1, 2, 3, 4, 5, 6]), copy1(4, 6)]],
    ];
    for (const [length, elements] of cases) {
      const input = block(length, ...elements);
      expect(snappyUncompress(input, length)).toEqual(expected(input, length));
    }
  });

  it("fails on corrupt input instead of reading or writing outside it", () => {
    // A copy from before the start, a copy of offset 0, a literal longer than the input.
    expect(() => snappyUncompress(block(8, literal([1]), copy1(4, 2)), 8)).toThrow(/out of range/);
    expect(() => snappyUncompress(block(8, literal([1]), copy1(4, 0)), 8)).toThrow(/out of range/);
    expect(() => snappyUncompress(block(8, [7 << 2, 1, 2]), 8)).toThrow(/past the input/);
    // More output than the page says, or less.
    expect(() => snappyUncompress(block(4, literal([1, 2, 3, 4, 5])), 4)).toThrow(/past the input or output/);
    expect(() => snappyUncompress(block(6, literal([1, 2, 3])), 6)).toThrow(/3 bytes decompressed/);
    // An element cut short.
    expect(() => snappyUncompress(block(8, literal([1]), [2 | (3 << 2), 1]), 8)).toThrow(/past the input/);
  });
});
