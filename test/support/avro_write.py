"""
Writes one Avro object container file with Debian's python3-avro, an Avro writer independent of
ours (src/scan/iceberg/avro.ts) and of avsc: a JSON object {schema, records, metadata, codec} on
standard input, the file's bytes on standard output. Codecs: null, deflate, and snappy with
python3-snappy installed. Used by test/support/iceberg-evolved.ts.
"""

import io
import json
import sys
import warnings

import avro.errors
import avro.schema
from avro.datafile import DataFileWriter
from avro.io import DatumWriter


def main() -> None:
    # Iceberg's map-as-array-of-pairs (logicalType "map") is an annotation python3-avro does not know.
    warnings.filterwarnings("ignore", category=avro.errors.IgnoredLogicalType)
    spec = json.load(sys.stdin)
    out = io.BytesIO()
    writer = DataFileWriter(out, DatumWriter(), avro.schema.parse(json.dumps(spec["schema"])), codec=spec["codec"])
    # The header is written with the first block: metadata set here goes into it.
    for key, value in spec.get("metadata", {}).items():
        writer.set_meta(key, value.encode())
    for record in spec["records"]:
        writer.append(record)
    writer.flush()
    sys.stdout.buffer.write(out.getvalue())


if __name__ == "__main__":
    main()
