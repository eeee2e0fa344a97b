/**
 * The table metadata file as readTableMetadata takes it: the shape it reads is checked, so JSON
 * that is not Iceberg table metadata is an input error naming what is wrong. (Whole tables, from a
 * metastore through the object stores, are scanned in test/scan/iceberg.test.ts.)
 */

import { describe, expect, it } from "vitest";
import { ConnectorError, type ObjectStore } from "../../../src/scan/connectors/types";
import { readTableMetadata } from "../../../src/scan/iceberg/table";

/** An object store holding one metadata file, read whole as the reader does. */
function storeWith(json: string): ObjectStore {
  const bytes = new TextEncoder().encode(json);
  return {
    list: async () => [{ key: "t/metadata/v1.metadata.json", size: bytes.length }],
    stream: async () => new Blob([bytes]).stream(),
    readRange: async (_key, offset, length) => bytes.slice(offset, offset + length),
  };
}

const URI = "s3://bucket/t/metadata/v1.metadata.json";
const keyOf = (uri: string) => uri.replace("s3://bucket/", "");
const read = (metadata: unknown) =>
  readTableMetadata(storeWith(typeof metadata === "string" ? metadata : JSON.stringify(metadata)), keyOf, URI);

const valid = {
  "format-version": 2,
  "current-schema-id": 0,
  schemas: [
    {
      "schema-id": 0,
      fields: [
        { id: 1, name: "id", required: true, type: "long" },
        { id: 2, name: "tags", required: false, type: { type: "list", "element-id": 3, element: "string" } },
      ],
    },
  ],
  "current-snapshot-id": 7,
  snapshots: [{ "snapshot-id": 7, "manifest-list": "s3://bucket/t/metadata/snap-7.avro" }],
};

describe("Iceberg table metadata", () => {
  it("reads the current schema and the current snapshot's manifest list", async () => {
    expect(await read(valid)).toMatchObject({
      schema: [
        { name: "id", type: "integer", nullable: false },
        { name: "tags", type: "array", nullable: true },
      ],
      manifestList: "s3://bucket/t/metadata/snap-7.avro",
    });
  });

  it("refuses JSON that is not table metadata with a ConnectorError naming where, never a TypeError", async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["snapshots not a list", { ...valid, snapshots: "none" }, /not table metadata \(at snapshots: /],
      ["a field that is null", { ...valid, schemas: [{ fields: [null] }] }, /at schemas\.0\.fields\.0: /],
      [
        "a field without a name",
        { ...valid, schemas: [{ fields: [{ type: "int" }] }] },
        /at schemas\.0\.fields\.0\.name/,
      ],
      ["a snapshot id as text", { ...valid, "current-snapshot-id": "7" }, /at current-snapshot-id: /],
      ["a list", [valid], /not table metadata/],
      ["not JSON", "{ nope", /is not valid JSON/],
    ];
    for (const [what, metadata, message] of cases) {
      const error = await read(metadata).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, what).toBeInstanceOf(ConnectorError);
      expect((error as ConnectorError).kind, what).toBe("invalid");
      expect((error as Error).message, what).toMatch(message);
      expect((error as Error).message, what).toContain(URI);
    }
  });
});
