import { describe, expect, it } from "vitest";
import { compileKeyPattern, listMatching } from "../../../src/scan/connectors/glob";
import { ConnectorError } from "../../../src/scan/connectors/types";

const matches = (pattern: string, key: string) => compileKeyPattern(pattern).matches(key);

describe("compileKeyPattern", () => {
  it("takes the literal part before the first wildcard as the prefix", () => {
    expect(compileKeyPattern("data/2024/*.csv").prefix).toBe("data/2024/");
    expect(compileKeyPattern("data/2024-0?/x.csv").prefix).toBe("data/2024-0");
    expect(compileKeyPattern("**/x.csv").prefix).toBe("");
    expect(compileKeyPattern("data/x.csv").prefix).toBe("data/x.csv");
  });

  it("* stays within one segment", () => {
    expect(matches("data/*.csv", "data/a.csv")).toBe(true);
    expect(matches("data/*.csv", "data/.csv")).toBe(true);
    expect(matches("data/*.csv", "data/sub/a.csv")).toBe(false);
    expect(matches("data/*/x.csv", "data/a/x.csv")).toBe(true);
    expect(matches("data/*/x.csv", "data/a/b/x.csv")).toBe(false);
  });

  it("** crosses segments, and **/ may stand for no folder at all", () => {
    expect(matches("data/**/x.csv", "data/x.csv")).toBe(true);
    expect(matches("data/**/x.csv", "data/a/b/c/x.csv")).toBe(true);
    expect(matches("data/**/x.csv", "database/x.csv")).toBe(false);
    expect(matches("data/**", "data/a/b")).toBe(true);
    expect(matches("**/*.csv", "a.csv")).toBe(true);
    expect(matches("**/*.csv", "a/b.csv")).toBe(true);
    expect(matches("data/x**.csv", "data/x/y.csv")).toBe(true);
  });

  it("? is one character other than /", () => {
    expect(matches("part-?.csv", "part-1.csv")).toBe(true);
    expect(matches("part-?.csv", "part-12.csv")).toBe(false);
    expect(matches("a?b", "a/b")).toBe(false);
  });

  it("treats regex characters and the rest literally", () => {
    expect(matches("data/a+b (1).csv", "data/a+b (1).csv")).toBe(true);
    expect(matches("data/a.csv", "data/aXcsv")).toBe(false);
    expect(matches("data/[x]*.csv", "data/[x]1.csv")).toBe(true);
    expect(matches("data/$^|{}.csv", "data/$^|{}.csv")).toBe(true);
  });

  it("a plain key matches itself only; a key ending in / matches everything below", () => {
    expect(matches("data/x.csv", "data/x.csv")).toBe(true);
    expect(matches("data/x.csv", "data/x.csv.bak")).toBe(false);
    expect(matches("data/", "data/a/b/c.csv")).toBe(true);
    expect(matches("data/", "database/a.csv")).toBe(false);
  });
});

describe("listMatching", () => {
  const pages = [
    {
      objects: [
        { key: "d/", size: 0 },
        { key: "d/b.csv", size: 2 },
      ],
      next: "t1",
    },
    {
      objects: [
        { key: "d/a.csv", size: 1 },
        { key: "d/c.txt", size: 3 },
      ],
      next: "t2",
    },
    { objects: [{ key: "d/e.csv", size: 5 }] },
  ];

  it("follows tokens, filters, drops folder markers and sorts", async () => {
    const seen: (string | undefined)[] = [];
    const found = await listMatching("d/*.csv", async (prefix, token) => {
      expect(prefix).toBe("d/");
      seen.push(token);
      return pages[seen.length - 1]!;
    });
    expect(seen).toEqual([undefined, "t1", "t2"]);
    expect(found.map((o) => o.key)).toEqual(["d/a.csv", "d/b.csv", "d/e.csv"]);
  });

  it("refuses a pattern that matches more objects than the limit", async () => {
    let page = 0;
    const err = await listMatching("d/**", async () => pages[page++]!, {}, 2).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectorError);
    expect((err as ConnectorError).kind).toBe("invalid");
  });
});
