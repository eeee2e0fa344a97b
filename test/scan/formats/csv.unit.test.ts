import { describe, expect, it } from "vitest";
import { ConnectorError } from "../../../src/scan/connectors/types";
import { bytesSource, type RecordSource, readColumns, readRecords, readSchema } from "../../../src/scan/formats";
import { batchesOf, chunkSource, encoder, failure, rowsOf, rowsOfColumns, splitAt, splitEvery } from "./helpers";

const csv = (text: string, options: Parameters<typeof readRecords>[2] = {}) =>
  rowsOf(readRecords(bytesSource(encoder.encode(text)), "csv", options));

describe("CSV reader", () => {
  it("names attributes from the header; empty unquoted is null, quoted empty is the empty string", async () => {
    expect(await csv('id,name,note\n1,Ann,\n2,,""\n3,"Bo",x\n')).toEqual([
      { id: "1", name: "Ann", note: null },
      { id: "2", name: null, note: "" },
      { id: "3", name: "Bo", note: "x" },
    ]);
  });

  it("reads quoted fields with doubled quotes, separators and line breaks inside", async () => {
    const text = 'a,b\n"say ""hi""","x,y"\n"line1\nline2","crlf\r\ninside"\n"""",""""""\n';
    expect(await csv(text)).toEqual([
      { a: 'say "hi"', b: "x,y" },
      { a: "line1\nline2", b: "crlf\r\ninside" },
      { a: '"', b: '""' },
    ]);
  });

  it("accepts LF, CRLF and CR line ends, mixed, with or without a final line end", async () => {
    const expected = [
      { a: "1", b: "2" },
      { a: "3", b: "4" },
      { a: "5", b: "6" },
    ];
    expect(await csv("a,b\n1,2\n3,4\n5,6\n")).toEqual(expected);
    expect(await csv("a,b\r\n1,2\r\n3,4\r\n5,6")).toEqual(expected);
    expect(await csv("a,b\r1,2\r3,4\r5,6\r")).toEqual(expected);
    expect(await csv("a,b\r\n1,2\n3,4\r5,6\r\n")).toEqual(expected);
  });

  it("skips blank lines and reads a trailing empty field at the end of the file", async () => {
    expect(await csv("a,b\n\n1,2\r\n\r\n3,\n\n")).toEqual([
      { a: "1", b: "2" },
      { a: "3", b: null },
    ]);
    expect(await csv("a,b\n1,")).toEqual([{ a: "1", b: null }]);
  });

  it("drops a UTF-8 byte order mark", async () => {
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode("id,name\n1,é\n")]);
    expect(await rowsOf(readRecords(bytesSource(bytes), "csv"))).toEqual([{ id: "1", name: "é" }]);
    // Also when the BOM arrives split over chunks.
    expect(await rowsOf(readRecords(chunkSource(splitAt(bytes, 1, 2)), "csv"))).toEqual([{ id: "1", name: "é" }]);
  });

  it("makes duplicate and empty header names unique", async () => {
    const rows = await csv("col,col,,col_2, \n1,2,3,4,5\n");
    expect(rows).toEqual([{ col: "1", col_2: "2", column_3: "3", col_2_2: "4", column_5: "5" }]);
  });

  it("reads short rows with nulls and drops (and counts) the extra fields of long rows", async () => {
    const batches = await batchesOf(
      readRecords(bytesSource(encoder.encode("a,b,c\n1\n1,2,3,4,5\n1,2,3\n1,2,3,4\n")), "csv"),
    );
    expect(batches.flatMap((batch) => batch.rows)).toEqual([
      { a: "1", b: null, c: null },
      { a: "1", b: "2", c: "3" },
      { a: "1", b: "2", c: "3" },
      { a: "1", b: "2", c: "3" },
    ]);
    const last = batches.at(-1)!;
    expect(last.raggedRows).toBe(3);
    expect(last.droppedFields).toBe(3);
  });

  it.each([
    ["\t", 'a\tb\n1\t"x\ty"\n'],
    [";", 'a;b\n1;"x;y"\n'],
    ["|", 'a|b\n1|"x|y"\n'],
    ["\\t", 'a\tb\n1\t"x\ty"\n'],
    ["tab", 'a\tb\n1\t"x\ty"\n'],
  ])("splits on the separator %j", async (separator, text) => {
    expect(await csv(text, { separator })).toEqual([{ a: "1", b: `x${separator.length === 1 ? separator : "\t"}y` }]);
  });

  it("leaves other separators inside fields when one is configured", async () => {
    expect(await csv("a;b\n1,5;2\n", { separator: ";" })).toEqual([{ a: "1,5", b: "2" }]);
  });

  it("refuses a separator that is not one character", async () => {
    const error = await failure(csv("a,b\n", { separator: "::" }));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("invalid");
  });

  it("fails on a quoted field left open at the end of the file", async () => {
    const error = await failure(csv('a,b\n1,"open\n2,3\n'));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("invalid");
    expect(error.message).toMatch(/test-file|record 2/);
    expect(error.message).toContain("not closed");
  });

  it("keeps text after a closing quote, as most readers do", async () => {
    expect(await csv('a,b\n"x"y,2\n')).toEqual([{ a: "xy", b: "2" }]);
  });

  it("reads only the requested columns, in their order; an absent one is null", async () => {
    expect(await csv("a,b,c\n1,2,3\n", { columns: ["c", "a", "zz"] })).toEqual([{ c: "3", a: "1", zz: null }]);
  });

  it("reads a header-only or empty file as no rows", async () => {
    expect(await csv("a,b\n")).toEqual([]);
    expect(await csv("")).toEqual([]);
  });

  it("gives identical rows whatever the chunk boundaries (every byte offset, and byte by byte)", async () => {
    const text =
      'id,"na""me",note,city\r\n' +
      '1,"Zoë ""Z"", Jr.","multi\r\nline ✓",Kraków\r\n' +
      '2,,"",東京\r\n' +
      '3,"😀 emoji, ok","",São Paulo\r' +
      '4,"a""",b,"c\nd"\n' +
      "5,x,y,z";
    const bytes = encoder.encode(text);
    const expected = await rowsOf(readRecords(bytesSource(bytes), "csv"));
    expect(expected).toHaveLength(5);
    expect(expected[0]).toEqual({ id: "1", 'na"me': 'Zoë "Z", Jr.', note: "multi\r\nline ✓", city: "Kraków" });
    expect(expected[1]).toEqual({ id: "2", 'na"me': null, note: "", city: "東京" });
    expect(expected[2]).toEqual({ id: "3", 'na"me': "😀 emoji, ok", note: "", city: "São Paulo" });
    expect(expected[3]).toEqual({ id: "4", 'na"me': 'a"', note: "b", city: "c\nd" });
    for (let offset = 0; offset <= bytes.byteLength; offset++) {
      const rows = await rowsOf(readRecords(chunkSource(splitAt(bytes, offset)), "csv"));
      expect(rows, `split at byte ${offset}`).toEqual(expected);
    }
    for (let a = 1; a < bytes.byteLength; a += 7) {
      const rows = await rowsOf(readRecords(chunkSource(splitAt(bytes, a, Math.min(a + 3, bytes.byteLength))), "csv"));
      expect(rows, `split at bytes ${a} and ${a + 3}`).toEqual(expected);
    }
    expect(await rowsOf(readRecords(chunkSource(splitEvery(bytes, 1)), "csv"))).toEqual(expected);
    // Read as columns: the same values, whatever the chunks and the batch size.
    for (let offset = 0; offset <= bytes.byteLength; offset += 5) {
      const rows = await rowsOfColumns(readColumns(chunkSource(splitAt(bytes, offset)), "csv", { batchSize: 2 }));
      expect(rows, `columns, split at byte ${offset}`).toEqual(expected);
    }
    expect(await rowsOfColumns(readColumns(bytesSource(bytes), "csv", { columns: ["city", "zz"] }))).toEqual(
      expected.map((row) => ({ city: row.city, zz: null })),
    );
  });

  it("reads a single column (no separator anywhere) in any chunks", async () => {
    const values = Array.from({ length: 300 }, (_, i) => (i % 9 === 0 ? "" : `value ${i} ${"x".repeat(i % 40)}`));
    const bytes = encoder.encode(`only\n${values.join("\r\n")}\n`);
    const expected = values.flatMap((v) => (v === "" ? [] : [{ only: v }]));
    for (const size of [1, 7, 64, 4096]) {
      expect(await rowsOf(readRecords(chunkSource(splitEvery(bytes, size)), "csv"))).toEqual(expected);
      const columns = readColumns(chunkSource(splitEvery(bytes, size)), "csv", { batchSize: 50 });
      expect(await rowsOfColumns(columns)).toEqual(expected);
    }
  });

  it("reads ragged records, blank lines and chosen columns alike as rows and as columns", async () => {
    // Short and long records, blank lines (LF and CRLF), an empty last field, a quoted empty field.
    const text = 'a,b,c\n1,2\n\n3,4,5,6,7\r\n\r\n,,\n"",x,\n8\n9,10,11,';
    const bytes = encoder.encode(text);
    for (const columns of [undefined, ["c", "zz", "a"], ["b", "b", "a"]]) {
      const expected = await rowsOf(readRecords(bytesSource(bytes), "csv", { columns }));
      expect(expected).toHaveLength(6);
      for (let offset = 0; offset <= bytes.byteLength; offset++) {
        for (const batchSize of [1, 2, 1000]) {
          const source = chunkSource(splitAt(bytes, offset));
          const rows = await rowsOfColumns(readColumns(source, "csv", { columns, batchSize }));
          expect(rows, `columns ${columns}, split at byte ${offset}, batches of ${batchSize}`).toEqual(expected);
        }
      }
    }
  });

  it("yields batches of at most batchSize rows with growing byte counts", async () => {
    const lines = ["n"];
    for (let i = 0; i < 2500; i++) lines.push(String(i));
    const bytes = encoder.encode(`${lines.join("\n")}\n`);
    const batches = await batchesOf(readRecords(chunkSource(splitEvery(bytes, 1000)), "csv", { batchSize: 300 }));
    expect(batches.map((batch) => batch.rows.length)).toEqual([...Array(8).fill(300), 100]);
    const bytesSeen = batches.map((batch) => batch.bytes);
    expect(bytesSeen).toEqual([...bytesSeen].sort((a, b) => a - b));
    expect(bytesSeen.at(-1)).toBe(bytes.byteLength);
    expect(batches.flatMap((batch) => batch.rows).map((row) => Number(row.n))).toEqual([...Array(2500).keys()]);
  });

  it("streams 200,000 generated rows in 64 KiB chunks, every value intact", async () => {
    const total = 200_000;
    // Generated while read, so the test never holds the whole file either.
    let expectedIdSum = 0;
    let expectedNulls = 0;
    let expectedScore = 0;
    const source: RecordSource = {
      size: 0,
      readRange: async () => new Uint8Array(),
      stream: async () => {
        let next = 0;
        let header = true;
        return new ReadableStream<Uint8Array>({
          pull(controller) {
            if (next >= total) {
              controller.close();
              return;
            }
            let text = header ? "id,name,score,flag\r\n" : "";
            header = false;
            while (text.length < 64 * 1024 && next < total) {
              const i = next++;
              expectedIdSum += i;
              expectedScore += (i % 1000) / 4;
              const flag = i % 7 === 0 ? "" : i % 2 === 0 ? "yes" : '"no"';
              if (i % 7 === 0) expectedNulls++;
              text += `${i},"name ${i}, ""${i % 10}""",${(i % 1000) / 4},${flag}\r\n`;
            }
            // Chunks of exactly 64 KiB, cutting rows (and quoted fields) anywhere.
            const bytes = encoder.encode(text);
            for (let offset = 0; offset < bytes.byteLength; offset += 64 * 1024) {
              controller.enqueue(bytes.subarray(offset, offset + 64 * 1024));
            }
          },
        });
      },
    };
    let count = 0;
    let idSum = 0;
    let nulls = 0;
    let score = 0;
    let badNames = 0;
    for await (const batch of readRecords(source, "csv", { batchSize: 5000 })) {
      for (const row of batch.rows) {
        const id = Number(row.id);
        if (row.name !== `name ${id}, "${id % 10}"`) badNames++;
        idSum += id;
        score += Number(row.score);
        if (row.flag === null) nulls++;
        else if (row.flag !== (id % 2 === 0 ? "yes" : "no")) badNames++;
        count++;
      }
    }
    expect(count).toBe(total);
    expect(idSum).toBe(expectedIdSum);
    expect(idSum).toBe((total * (total - 1)) / 2);
    expect(score).toBe(expectedScore);
    expect(nulls).toBe(expectedNulls);
    expect(badNames).toBe(0);
  });
});

describe("CSV schema", () => {
  it("takes names from the header and infers types from a sample", async () => {
    const text =
      "id,price,active,day,at,zip,label,mixed,empty\n" +
      "1,2.5,true,2024-01-31,2024-01-31T10:00:00Z,00123,a,1,\n" +
      "2,3,FALSE,2024-02-01,2024-02-01 11:30,01234,b,x,\n" +
      "-3,-1e3,,2024-02-02,2024-02-02,99999,,,\n";
    const fields = await readSchema(bytesSource(encoder.encode(text)), "csv");
    expect(fields).toEqual([
      { name: "id", type: "integer", nullable: true },
      { name: "price", type: "number", nullable: true },
      { name: "active", type: "boolean", nullable: true },
      { name: "day", type: "date", nullable: true },
      { name: "at", type: "timestamp", nullable: true },
      { name: "zip", type: "string", nullable: true },
      { name: "label", type: "string", nullable: true },
      { name: "mixed", type: "string", nullable: true },
      { name: "empty", type: "unknown", nullable: true },
    ]);
  });

  it("names the attributes of a file with no rows, which have no type yet", async () => {
    expect(await readSchema(bytesSource(encoder.encode("a;b\n")), "csv", { separator: ";" })).toEqual([
      { name: "a", type: "unknown", nullable: true },
      { name: "b", type: "unknown", nullable: true },
    ]);
  });

  it("reads only the sample, not the whole file", async () => {
    let pulled = 0;
    const source: RecordSource = {
      size: 0,
      readRange: async () => new Uint8Array(),
      stream: async () =>
        new ReadableStream<Uint8Array>({
          pull(controller) {
            pulled++;
            controller.enqueue(encoder.encode(pulled === 1 ? "n\n" : "1\n".repeat(1000)));
          },
        }),
    };
    // An endless stream: schema reading must stop after the sample.
    expect(await readSchema(source, "csv", { sampleSize: 2500 })).toEqual([
      { name: "n", type: "integer", nullable: true },
    ]);
    expect(pulled).toBeLessThan(10);
  });
});
