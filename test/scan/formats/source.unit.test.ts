import { parquetWriteBuffer } from "hyparquet-writer";
import { describe, expect, it } from "vitest";
import { ConnectorError, type ObjectStore, type StoredObject } from "../../../src/scan/connectors/types";
import { type FileFormat, objectSource, readRecords, readSchema } from "../../../src/scan/formats";
import { encoder, failure, rowsOf } from "./helpers";

/** An in-memory object store that records what was asked of it. */
function memoryStore(files: Record<string, Uint8Array>) {
  const calls: string[] = [];
  const bytesOf = (key: string) => {
    const bytes = files[key];
    if (!bytes) throw new ConnectorError(`no such object: ${key}`, "not_found");
    return bytes;
  };
  const store: ObjectStore = {
    list: async (pattern) =>
      Object.keys(files)
        .filter((key) => key.startsWith(pattern))
        .map((key) => ({ key, size: files[key]!.byteLength })),
    stream: async (key) => {
      calls.push(`stream ${key}`);
      const bytes = bytesOf(key);
      return new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(bytes.slice(0, 5));
          controller.enqueue(bytes.slice(5));
          controller.close();
        },
      });
    },
    readRange: async (key, offset, length) => {
      calls.push(`range ${key} ${offset} ${length}`);
      return bytesOf(key).slice(offset, offset + length);
    },
  };
  return { store, calls };
}

const parquet = new Uint8Array(
  parquetWriteBuffer({
    columnData: [
      { name: "id", data: [1, 2], type: "INT32", nullable: false },
      { name: "name", data: ["a", null], type: "STRING" },
    ],
  }),
);

const files: Record<string, Uint8Array> = {
  "in/a.csv": encoder.encode("id,name\n1,a\n2,\n"),
  "in/a.ndjson": encoder.encode('{"id":1,"name":"a"}\n{"id":2,"name":null}\n'),
  "in/a.json": encoder.encode('[{"id":1,"name":"a"},{"id":2,"name":null}]'),
  "in/a.parquet": parquet,
};

describe("objectSource", () => {
  it.each([
    [
      "csv",
      "in/a.csv",
      [
        { id: "1", name: "a" },
        { id: "2", name: null },
      ],
      "stream",
    ],
    [
      "ndjson",
      "in/a.ndjson",
      [
        { id: 1, name: "a" },
        { id: 2, name: null },
      ],
      "stream",
    ],
    [
      "json",
      "in/a.json",
      [
        { id: 1, name: "a" },
        { id: 2, name: null },
      ],
      "stream",
    ],
    [
      "parquet",
      "in/a.parquet",
      [
        { id: 1, name: "a" },
        { id: 2, name: null },
      ],
      "range",
    ],
  ] as const)("reads a %s object of an ObjectStore", async (format, key, expected, access) => {
    const { store, calls } = memoryStore(files);
    const [object] = await store.list(key);
    const source = objectSource(store, object as StoredObject);
    expect(source).toMatchObject({ name: key, size: files[key]!.byteLength });
    expect(await rowsOf(readRecords(source, format))).toEqual(expected);
    expect(calls.every((call) => call.startsWith(`${access} ${key}`))).toBe(true);
  });

  it("passes the store's errors through", async () => {
    const { store } = memoryStore(files);
    const source = objectSource(store, { key: "in/gone.csv", size: 10 });
    const error = await failure(rowsOf(readRecords(source, "csv")));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("not_found");
  });
});

describe("readSchema", () => {
  it.each([
    [
      "csv",
      "in/a.csv",
      [
        { name: "id", type: "integer", nullable: true },
        { name: "name", type: "string", nullable: true },
      ],
    ],
    [
      "ndjson",
      "in/a.ndjson",
      [
        { name: "id", type: "integer", nullable: true },
        { name: "name", type: "string", nullable: true },
      ],
    ],
    [
      "json",
      "in/a.json",
      [
        { name: "id", type: "integer", nullable: true },
        { name: "name", type: "string", nullable: true },
      ],
    ],
    [
      "parquet",
      "in/a.parquet",
      [
        { name: "id", type: "integer", nullable: false },
        { name: "name", type: "string", nullable: true },
      ],
    ],
  ] as const)("reads the attributes of a %s file", async (format, key, expected) => {
    const { store } = memoryStore(files);
    expect(await readSchema(objectSource(store, { key, size: files[key]!.byteLength }), format)).toEqual(expected);
  });

  it("refuses an unknown format", async () => {
    const { store } = memoryStore(files);
    const source = objectSource(store, { key: "in/a.csv", size: 1 });
    const error = await failure(readSchema(source, "xml" as FileFormat));
    expect(error).toBeInstanceOf(ConnectorError);
    expect(error.kind).toBe("unsupported");
    expect((await failure(rowsOf(readRecords(source, "avro" as FileFormat)))).kind).toBe("unsupported");
  });
});
