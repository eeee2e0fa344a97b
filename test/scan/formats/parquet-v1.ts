import { parquetMetadata } from "hyparquet";
import { parquetHeader } from "hyparquet/src/column.js";
import type { PageHeader } from "hyparquet/src/types.js";
import { ByteWriter } from "hyparquet-writer";
import { writePageHeader } from "hyparquet-writer/src/datapage.js";
import { writeMetadata } from "hyparquet-writer/src/metadata.js";
import { snappyCompress } from "hyparquet-writer/src/snappy.js";

const MAGIC = 0x31524150; // "PAR1"

/**
 * An uncompressed Parquet file of flat columns (as hyparquet-writer writes it, pages v2) rewritten
 * with pages v1, as pyarrow and DuckDB write them: the definition levels (length-prefixed) and the
 * values in one body, compressed together when `codec` is SNAPPY. hyparquet-writer writes only v2.
 */
export function withPagesV1(buffer: ArrayBuffer, codec: "UNCOMPRESSED" | "SNAPPY"): ArrayBuffer {
  const metadata = parquetMetadata(buffer);
  const writer = new ByteWriter();
  writer.appendUint32(MAGIC);
  for (const rowGroup of metadata.row_groups) {
    for (const chunk of rowGroup.columns) {
      const meta = chunk.meta_data!;
      if (meta.codec !== "UNCOMPRESSED") throw new Error("withPagesV1 takes an uncompressed file");
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const end = start + Number(meta.total_compressed_size);
      const reader = { view: new DataView(buffer), offset: start };
      const chunkStart = writer.offset;
      let dictionaryOffset: number | undefined;
      let dataOffset: number | undefined;
      let uncompressed = 0;
      while (reader.offset < end) {
        const header = parquetHeader(reader);
        const body = new Uint8Array(buffer, reader.offset, header.compressed_page_size);
        reader.offset += header.compressed_page_size;
        let plain: Uint8Array;
        let out: PageHeader;
        if (header.type === "DICTIONARY_PAGE") {
          dictionaryOffset = writer.offset;
          plain = body;
          out = { ...header };
        } else {
          const v2 = header.data_page_header_v2!;
          if (v2.repetition_levels_byte_length !== 0) throw new Error("withPagesV1 takes flat columns");
          const levels = v2.definition_levels_byte_length;
          dataOffset ??= writer.offset;
          plain = new Uint8Array(levels > 0 ? 4 + body.length : body.length);
          if (levels > 0) new DataView(plain.buffer).setUint32(0, levels, true);
          plain.set(body, levels > 0 ? 4 : 0);
          out = {
            type: "DATA_PAGE",
            uncompressed_page_size: 0,
            compressed_page_size: 0,
            data_page_header: {
              num_values: v2.num_values,
              encoding: v2.encoding,
              definition_level_encoding: "RLE",
              repetition_level_encoding: "RLE",
            },
          };
        }
        const stored = codec === "SNAPPY" ? snappyCompress(plain) : plain;
        out.uncompressed_page_size = plain.length;
        out.compressed_page_size = stored.length;
        const headerStart = writer.offset;
        writePageHeader(writer, out);
        uncompressed += writer.offset - headerStart + plain.length;
        writer.appendBytes(stored);
      }
      meta.codec = codec;
      meta.data_page_offset = BigInt(dataOffset!);
      meta.dictionary_page_offset = dictionaryOffset === undefined ? undefined : BigInt(dictionaryOffset);
      meta.total_compressed_size = BigInt(writer.offset - chunkStart);
      meta.total_uncompressed_size = BigInt(uncompressed);
      meta.encoding_stats = undefined;
      chunk.file_offset = BigInt(chunkStart);
      chunk.offset_index_offset = undefined;
      chunk.offset_index_length = undefined;
      chunk.column_index_offset = undefined;
      chunk.column_index_length = undefined;
      meta.bloom_filter_offset = undefined;
      meta.bloom_filter_length = undefined;
    }
  }
  const { metadata_length: _, ...footer } = metadata;
  writeMetadata(writer, footer as typeof metadata);
  writer.appendUint32(MAGIC);
  return writer.getBuffer();
}

/** The same file with its footer edited by `edit` (the pages stay where they are). */
export function withFooter(
  buffer: ArrayBuffer,
  edit: (metadata: ReturnType<typeof parquetMetadata>) => void,
): ArrayBuffer {
  const metadata = parquetMetadata(buffer);
  const { metadata_length: length, ...footer } = metadata;
  edit(footer as typeof metadata);
  const writer = new ByteWriter();
  // Everything before the old footer (its bytes, its 4-byte length and the magic are at the end).
  writer.appendBytes(new Uint8Array(buffer, 0, buffer.byteLength - 8 - length));
  writeMetadata(writer, footer as typeof metadata);
  writer.appendUint32(MAGIC);
  return writer.getBuffer();
}

/**
 * The schema of a file of two columns, `id` (INT32) and `tags`, a three-level list of text (the
 * Parquet spec's LIST layout): read by hyparquet's own assembly, not page by page as flat columns.
 */
export function idAndTagsSchema(element: "REQUIRED" | "OPTIONAL") {
  return [
    { name: "root", num_children: 2 },
    { name: "id", type: "INT32" as const, repetition_type: "REQUIRED" as const },
    { name: "tags", repetition_type: "OPTIONAL" as const, converted_type: "LIST" as const, num_children: 1 },
    { name: "list", repetition_type: "REPEATED" as const, num_children: 1 },
    { name: "element", type: "BYTE_ARRAY" as const, converted_type: "UTF8" as const, repetition_type: element },
  ];
}
