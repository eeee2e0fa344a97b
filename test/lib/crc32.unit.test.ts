import { describe, expect, it } from "vitest";
import { crc32 } from "../../src/lib/crc32";

describe("crc32", () => {
  it("gives the standard check values of CRC-32/ISO-HDLC", () => {
    const text = (s: string) => new TextEncoder().encode(s);
    expect(crc32(text("123456789"))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    expect(crc32(text("The quick brown fox jumps over the lazy dog"))).toBe(0x414fa339);
    expect(crc32(new Uint8Array(32).fill(0xff))).toBe(0xff6cab0b);
  });
});
