"""dq-monitor full-scan driver: profiles one asset on the tenant's Spark cluster and posts the
profile to the job's signed callback (docs/resources/light-and-full-scans.md).

    spark-submit dq_profile.py --job-id job_… --callback-url https://…/api/callbacks/scans/job_…
        --callback-secret dqcb_… --source '{"kind":"files","uri":"s3://b/p/*.csv","format":"csv"}'
        --options '{"id_attributes":["id"]}' [--result-uri s3://bucket/spark-results/t/job/profile.json]

The profile has the Worker's shape and definitions (src/scan/profile.ts, src/scan/sql/generator.ts):
nulls, blank strings, distinct (approximate within ~2 %), min/max, mean, population stddev, the
eleven quantiles, top 20 values, value shapes ("Aa9" classes, runs collapsed, 64 characters),
text type counts with the same regular expressions, duplicate ids and duplicate rows, freshness.

Only python3's standard library is used outside Spark; `pyspark` is imported inside the functions
that need it, so everything else is tested with `python3 -m unittest` (spark/tests) without Spark.
"""

import argparse
import hashlib
import hmac
import json
import sys
import time
import urllib.error
import urllib.request

# What the Worker accepts in one callback (src/pipeline/spark-callback.ts CALLBACK_MAX_BYTES).
CALLBACK_MAX_BYTES = 96 * 1024
QUANTILE_POINTS = [0, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1]
TOP_K = 20
# The callback's cap on one text (src/scan/spark/callback-body.ts), in UTF-16 code units as zod counts.
MAX_TEXT = 4096
# A top value longer than this is cut, with an ellipsis, as the Worker's (MAX_TOP_VALUE_LENGTH).
MAX_TOP_VALUE_LENGTH = 200
# The segment of rows matching none of the listed values (src/scan/profile.ts OTHER_SEGMENT).
OTHER_SEGMENT = "(other)"
MAX_PATTERN_LENGTH = 64
SOURCE_KINDS = ("files", "table", "iceberg", "jdbc")
FILE_FORMATS = ("csv", "ndjson", "json", "parquet")

# The generator's TEXT_TYPE_PATTERNS (src/scan/sql/generator.ts), for string columns.
TEXT_TYPE_PATTERNS = {
    "integer": "^ *[-+]?[0-9]+ *$",
    "numeric": "^ *[-+]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][-+]?[0-9]+)? *$",
    "boolean": "^ *([Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]) *$",
    "date": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
    "timestamp": "^[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.][0-9]+)?)?(Z|[-+][0-9]{2}(:?[0-9]{2})?)?$",
}


# JDBC driver classes by GENERIC_JDBC db_type (docs/resources/spark-providers.md lists the URL forms).
JDBC_DRIVERS = {
    "postgresql": "org.postgresql.Driver",
    "mysql": "com.mysql.cj.jdbc.Driver",
    "mariadb": "org.mariadb.jdbc.Driver",
    "sqlserver": "com.microsoft.sqlserver.jdbc.SQLServerDriver",
    "oracle": "oracle.jdbc.OracleDriver",
}


class UsageError(Exception):
    """Arguments the Worker would never send: the job cannot start."""


# ---- arguments ----------------------------------------------------------------------------------


def parse_args(argv):
    """The driver's arguments, checked: --source and --options are JSON objects of known shape."""
    p = argparse.ArgumentParser(prog="dq_profile.py", description="dq-monitor full-scan driver")
    p.add_argument("--job-id", required=True)
    p.add_argument("--callback-url", required=True)
    p.add_argument("--callback-secret", required=True)
    p.add_argument("--source", required=True, help="JSON: what to read")
    p.add_argument("--options", default="{}", help="JSON: the asset's scan options")
    p.add_argument("--result-uri", default=None, help="where a profile too large for the callback is written")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        raise UsageError("invalid arguments") from exc
    if not args.callback_url.startswith(("https://", "http://")):
        raise UsageError("--callback-url must be an http(s) URL")
    args.source = _json_object(args.source, "--source")
    args.options = _json_object(args.options, "--options")
    kind = args.source.get("kind")
    if kind not in SOURCE_KINDS:
        raise UsageError("--source kind must be one of " + ", ".join(SOURCE_KINDS))
    if kind == "files":
        if not isinstance(args.source.get("uri"), str) or args.source.get("format") not in FILE_FORMATS:
            raise UsageError("--source files need a uri and a format (" + ", ".join(FILE_FORMATS) + ")")
    elif not isinstance(args.source.get("table"), str) or not args.source["table"]:
        raise UsageError("--source " + kind + " needs a table")
    return args


def _json_object(text, name):
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise UsageError(name + " is not JSON") from exc
    if not isinstance(value, dict):
        raise UsageError(name + " must be a JSON object")
    return value


# ---- the callback -------------------------------------------------------------------------------


def sign(secret, timestamp, body):
    """v1=<hex HMAC-SHA256 of "<timestamp>.<body>">, keyed with the job's secret."""
    mac = hmac.new(secret.encode("utf-8"), (timestamp + "." + body).encode("utf-8"), hashlib.sha256)
    return "v1=" + mac.hexdigest()


def encode(payload):
    """The body exactly as sent and signed: compact JSON, UTF-8."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def callback_request(url, secret, payload, now=None):
    """The signed request of a payload: (url, headers, body bytes)."""
    body = encode(payload)
    timestamp = str(int(time.time() if now is None else now))
    headers = {
        "Content-Type": "application/json",
        "X-DQ-Timestamp": timestamp,
        "X-DQ-Signature": sign(secret, timestamp, body),
    }
    return url, headers, body.encode("utf-8")


def result_payload(profile, result_uri, write):
    """The callback's payload: the profile inline, or written with `write(uri, text)` and sent by reference."""
    inline = {"status": "SUCCEEDED", "profile": profile}
    if len(encode(inline).encode("utf-8")) <= CALLBACK_MAX_BYTES - 512:
        return inline
    if not result_uri:
        return {"status": "FAILED", "error": "the profile is larger than a callback carries and the tenant has no storage for it"}
    text = encode(profile)
    write(result_uri, text)
    return {"status": "SUCCEEDED", "profile_ref": {"bytes": len(text.encode("utf-8"))}}


def failure_payload(error):
    """A failure as the callback carries it: the message only, never longer than the Worker accepts."""
    message = (str(error) or type(error).__name__).strip()
    return {"status": "FAILED", "error": message[:4000]}


def post_callback(url, secret, payload, opener=urllib.request.urlopen, attempts=5, pause=time.sleep):
    """Posts the signed payload, signing each attempt anew (the timestamp window); retries 5xx and network errors."""
    for attempt in range(attempts):
        target, headers, body = callback_request(url, secret, payload)
        request = urllib.request.Request(target, data=body, headers=headers, method="POST")
        try:
            with opener(request, timeout=30) as response:
                return response.status
        except urllib.error.HTTPError as err:
            # 4xx: the Worker refused it for good (used, late, invalid); retrying changes nothing.
            if err.code < 500 or attempt == attempts - 1:
                return err.code
        except OSError:
            if attempt == attempts - 1:
                raise
        pause(2 ** attempt)
    return None


# ---- result shaping (the Worker's AttributeProfile / AssetProfile) --------------------------------


def value_type(spark_type):
    """The profile's value type of a Spark SQL type name."""
    t = spark_type.lower()
    if t in ("tinyint", "smallint", "int", "integer", "bigint", "long", "short", "byte"):
        return "integer"
    if t in ("float", "double", "real") or t.startswith("decimal"):
        return "number"
    if t == "boolean":
        return "boolean"
    if t == "date":
        return "date"
    if t.startswith("timestamp"):
        return "timestamp"
    return "string"


def text_typing(counts, non_null):
    """A text column's type from the regex counts, as the Worker's textTyping (src/scan/sql/profile-table.ts)."""
    integer = counts.get("integer", 0)
    numeric = max(counts.get("numeric", 0), integer)
    date, timestamp, boolean = counts.get("date", 0), counts.get("timestamp", 0), counts.get("boolean", 0)
    type_counts = {
        "integer": integer,
        "number": numeric - integer,
        "boolean": boolean,
        "date": date,
        "timestamp": timestamp,
        "string": non_null - numeric - date - timestamp - boolean,
    }
    type_counts = {k: v for k, v in type_counts.items() if v}
    inferred, matching = "string", non_null
    if numeric * 2 > non_null:
        inferred, matching = ("number" if numeric > integer else "integer"), numeric
    elif (date + timestamp) * 2 > non_null:
        inferred, matching = ("timestamp" if timestamp else "date"), date + timestamp
    elif boolean * 2 > non_null:
        inferred, matching = "boolean", boolean
    return inferred, type_counts, non_null - matching


def _number(v):
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if f == f and f not in (float("inf"), float("-inf")) else None


def _scalar(v, kind):
    """min/max: numbers for numeric attributes, ISO text for dates and timestamps, text otherwise."""
    if v is None:
        return None
    if kind in ("integer", "number"):
        n = _number(v)
        if n is None:
            return None
        return int(n) if kind == "integer" and n.is_integer() else n
    if kind in ("date", "timestamp") and hasattr(v, "isoformat"):
        return iso_time(v, kind == "date")
    return str(v)


def iso_time(value, date_only):
    """A date or time as the Worker's isoTime (src/scan/profiler/attribute-stats.ts): Date.toISOString,
    milliseconds and "Z" (naive times are UTC, the session's zone), or its date part for a date."""
    import datetime

    if not hasattr(value, "hour"):
        value = datetime.datetime(value.year, value.month, value.day)
    if value.tzinfo is not None:
        value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
    if date_only:
        return value.date().isoformat()
    return value.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (value.microsecond // 1000)


def clip(text, keep=MAX_TEXT - 1):
    """A text longer than `keep` UTF-16 code units (as JavaScript counts them) cut to `keep`, with an ellipsis."""
    s = str(text)
    if len(s.encode("utf-16-le")) // 2 <= keep:
        return s
    out, units = [], 0
    for ch in s:
        w = 2 if ord(ch) > 0xFFFF else 1
        if units + w > keep:
            break
        out.append(ch)
        units += w
    return "".join(out) + "\u2026"


def attribute_profile(column, row_count, agg, top, patterns):
    """One attribute: `column` {name, type, text}, `agg` its aggregates, `top`/`patterns` [(key, count)] most first."""
    declared = value_type(column["type"])
    nulls = int(agg.get("nulls") or 0)
    non_null = row_count - nulls
    if column.get("text"):
        inferred, type_counts, mismatches = text_typing(agg.get("text_types") or {}, non_null)
        # A blank text is an empty, of no type, as the Worker's profiler counts it.
        blank = int(agg.get("empties") or 0)
        if blank and type_counts.get("string"):
            type_counts["string"] -= blank
            type_counts = {k: v for k, v in type_counts.items() if v}
    elif declared == "number":
        # A whole number in a floating column is an integer value, as the Worker types each value.
        whole = int(agg.get("integral") or 0)
        inferred, mismatches = declared, 0
        type_counts = {k: v for k, v in (("integer", whole), ("number", non_null - whole)) if v}
    else:
        inferred, type_counts, mismatches = declared, ({declared: non_null} if non_null else {}), 0
    out = {
        "name": column["name"],
        "inferred_type": inferred,
        "declared_type": column["type"],
        "count": row_count,
        "nulls": nulls,
        "empties": int(agg.get("empties") or 0),
        "distinct": int(agg.get("distinct") or 0),
        "distinct_exact": False,
        "top_values": [{"value": clip(k, MAX_TOP_VALUE_LENGTH), "count": int(c)} for k, c in top[:TOP_K]],
        "type_counts": type_counts,
        "type_mismatches": mismatches,
        "patterns": [{"pattern": clip(k), "share": (c / non_null) if non_null else 0} for k, c in patterns[:TOP_K]],
    }
    # A text column typed as numbers (CSV) has the numbers' range, mean, stddev and quantiles, as in the Worker.
    numeric = declared in ("integer", "number") or (column.get("text") and inferred in ("integer", "number"))
    # A text column typed as times (CSV) has the times' range, as the Worker's ISO text.
    timed = bool(column.get("text")) and inferred in ("date", "timestamp")
    ranged = inferred if numeric or timed else declared
    prefix = "n" if numeric else "t" if timed else ""
    for key in ("min", "max"):
        v = _scalar(agg.get(prefix + key) if prefix and agg.get(prefix + key) is not None else agg.get(key), ranged)
        if v is not None:
            out[key] = clip(v) if isinstance(v, str) else v
    if numeric:
        for key in ("mean", "stddev"):
            v = _number(agg.get(key))
            if v is not None:
                out[key] = v
        q = [_number(x) for x in (agg.get("quantiles") or [])]
        if len(q) == len(QUANTILE_POINTS) and all(x is not None for x in q):
            out["quantiles"] = q
    if inferred == "string" and _number(agg.get("mean_length")) is not None:
        out["mean_length"] = _number(agg.get("mean_length"))
    return out


def shape_profile(columns, totals, per_column, options):
    """The AssetProfile of a scan: `totals` {rows, bytes?, distinct_ids?, distinct_rows?, freshness?}."""
    rows = int(totals["rows"])
    profile = {
        "row_count": rows,
        "schema": [{"name": c["name"], "type": c["type"], "nullable": bool(c.get("nullable", True))} for c in columns],
        "attributes": [
            attribute_profile(c, rows, *per_column.get(c["name"], ({}, [], []))) for c in columns
        ],
        "sampled": bool(options.get("sample_fraction") not in (None, 100) or totals.get("limited")),
    }
    if totals.get("bytes") is not None:
        profile["bytes"] = int(totals["bytes"])
    if totals.get("distinct_ids") is not None:
        profile["duplicate_count"] = rows - int(totals["distinct_ids"])
    if totals.get("distinct_rows") is not None:
        profile["duplicate_rows"] = rows - int(totals["distinct_rows"])
    if totals.get("freshness") is not None:
        profile["freshness"] = iso_utc(totals["freshness"])
    return profile


def iso_utc(value):
    """ISO 8601 with an offset, as the Worker's freshness is: naive times are UTC (the session's zone)."""
    if not hasattr(value, "isoformat"):
        return str(value)
    if not hasattr(value, "hour"):  # a date
        return value.isoformat() + "T00:00:00Z"
    if value.tzinfo is None:
        return value.isoformat() + "Z"
    return value.isoformat().replace("+00:00", "Z")


# ---- Spark SQL (runs only on the cluster) ------------------------------------------------------


def quote(name):
    """A Spark SQL identifier."""
    return "`" + name.replace("`", "``") + "`"


def pattern_sql(expr):
    """The value's shape in Spark SQL: upper letters A, lower a, digits 9, runs collapsed, 64 characters."""
    shaped = (
        "regexp_replace(regexp_replace(regexp_replace(regexp_replace(CAST(" + expr + " AS STRING), "
        "'\\\\p{Lu}', 'A'), '\\\\p{Ll}', 'a'), '[0-9]', '9'), '(.)\\\\1+', '$1')"
    )
    return (
        "CASE WHEN length(" + shaped + ") > " + str(MAX_PATTERN_LENGTH) + " THEN concat(substring(" + shaped + ", 1, "
        + str(MAX_PATTERN_LENGTH) + "), '\u2026') ELSE " + shaped + " END"
    )


def _lit(v):
    """A Spark SQL string literal."""
    return "'" + str(v).replace("\\", "\\\\").replace("'", "\\'") + "'"


def in_values(attribute, values, none=False):
    """Rows whose attribute (as text) is one of `values` (None: NULL), or with `none` none of them,
    as the Worker's inValues (src/scan/sql/generator.ts)."""
    col = "CAST(" + quote(attribute) + " AS STRING)"
    texts = [v for v in values if v is not None]
    null_listed = len(texts) < len(values)
    listed = col + " IN (" + ", ".join(_lit(v) for v in texts) + ")" if texts else None
    if none:
        not_in = col + " NOT IN (" + ", ".join(_lit(v) for v in texts) + ")" if texts else "1 = 1"
        return "(" + col + " IS NOT NULL AND " + not_in + ")" if null_listed else "(" + col + " IS NULL OR " + not_in + ")"
    parts = ([listed] if listed else []) + ([col + " IS NULL"] if null_listed else [])
    if not parts:
        return "1 = 0"
    return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"


def where_sql(options, ts_expr=None):
    """The asset's filter and delta_only as a WHERE clause (values quoted as Spark SQL strings)."""
    parts = []
    for attribute, values in sorted((options.get("filter") or {}).items()):
        if values:
            parts.append(in_values(attribute, values))
    if options.get("delta_only") and options.get("timestamp_attribute") and options.get("last_max_timestamp"):
        ts = ts_expr or quote(options["timestamp_attribute"])
        parts.append(ts + " > TIMESTAMP " + _lit(options["last_max_timestamp"]))
    return " WHERE " + " AND ".join(parts) if parts else ""


def rows_sql(options, ts_expr=None):
    """The rows a profile reads, as the Worker's sourceOf: the source sampled first (TABLESAMPLE
    belongs to the relation, before WHERE), then filter and delta, then the newest `limit` rows."""
    sql = "SELECT * FROM dq_source"
    fraction = options.get("sample_fraction")
    if fraction not in (None, 100):
        sql += " TABLESAMPLE (" + str(float(fraction)) + " PERCENT)"
    sql += where_sql(options, ts_expr)
    if options.get("limit"):
        if options.get("timestamp_attribute"):
            sql += " ORDER BY " + (ts_expr or quote(options["timestamp_attribute"])) + " DESC"
        sql += " LIMIT " + str(int(options["limit"]))
    return sql


def file_pattern(uri):
    """(uri, reader options) of a files pattern. Hadoop globs have no `**`: a `prefix/**/<name glob>`
    is the prefix read recursively (recursiveFileLookup), its files filtered by name (pathGlobFilter)."""
    if "**" not in uri:
        return uri, {}
    head, _, tail = uri.partition("**")
    tail = tail.lstrip("/")
    if not head.endswith("/") or "/" in tail or "**" in tail or any(c in head.split("://", 1)[-1] for c in "*?[{"):
        raise UsageError("a ** pattern on Spark must be <folder>/**/<file name pattern>: " + uri)
    options = {"recursiveFileLookup": "true"}
    if tail and tail != "*":
        options["pathGlobFilter"] = tail
    return head, options


def read_source(spark, source):  # pragma: no cover - needs Spark
    """The asset as a DataFrame: files by pattern, a Delta or BigQuery table, Iceberg through the metastore, JDBC."""
    import os

    kind = source["kind"]
    if kind == "files":
        reader = spark.read
        fmt = source["format"]
        uri, recursive = file_pattern(source["uri"])
        source = dict(source, uri=uri)
        for key, value in recursive.items():
            reader = reader.option(key, value)
        if fmt == "csv":
            reader = reader.option("header", "true").option("inferSchema", "false")
            if source.get("delimiter"):
                reader = reader.option("sep", source["delimiter"])
            return reader.csv(source["uri"])
        if fmt in ("ndjson", "json"):
            return reader.option("multiLine", "false" if fmt == "ndjson" else "true").json(source["uri"])
        return reader.parquet(source["uri"])
    if kind == "iceberg":
        # The session catalog "dq" reads the table through the connection's Hive metastore.
        spark.conf.set("spark.sql.catalog.dq", "org.apache.iceberg.spark.SparkCatalog")
        spark.conf.set("spark.sql.catalog.dq.type", "hive")
        spark.conf.set("spark.sql.catalog.dq.uri", source["metastore_uri"])
        return spark.table("dq." + source["table"])
    if kind == "jdbc":
        # The JDBC URL and login are the cluster's secrets (environment), never the job's arguments;
        # the driver class follows the connection's db_type (its jar must be on the cluster).
        reader = spark.read.format("jdbc")
        driver = os.environ.get("DQ_JDBC_DRIVER") or JDBC_DRIVERS.get(source.get("db_type") or "")
        if driver:
            reader = reader.option("driver", driver)
        return (
            reader
            .option("url", os.environ["DQ_JDBC_URL"])
            .option("user", os.environ.get("DQ_JDBC_USER", ""))
            .option("password", os.environ.get("DQ_JDBC_PASSWORD", ""))
            .option("dbtable", source["table"])
            .load()
        )
    if source.get("format") == "bigquery":
        return spark.read.format("bigquery").option("table", source["table"]).load()
    return spark.table(source["table"])


def is_map(spark_type):
    """A MAP, or a type holding one: not orderable, not hashable, so no min/max, GROUP BY or DISTINCT."""
    return "map<" in spark_type.lower()


def columns_of(df):
    """The DataFrame's columns as the profile names them."""
    return [
        {"name": f.name, "type": f.dataType.simpleString(), "nullable": f.nullable, "text": f.dataType.simpleString() == "string"}
        for f in df.schema.fields
    ]


def timestamp_expr(columns, options):
    """The timestamp attribute as a TIMESTAMP: a text column (CSV) is cast, so freshness is a time."""
    name = options.get("timestamp_attribute")
    if not name:
        return None
    text = any(c["name"] == name and c.get("text") for c in columns)
    return "CAST(" + quote(name) + " AS TIMESTAMP)" if text else quote(name)


def aggregate_sql(columns, options, relation, ts_expr):
    """The one wide aggregate of a profile over `relation`."""
    items = ["count(*) AS rows"]
    numeric_rx = TEXT_TYPE_PATTERNS["numeric"]
    points = ", ".join(str(p) for p in QUANTILE_POINTS)
    for i, c in enumerate(columns):
        x = quote(c["name"])
        items.append("sum(CASE WHEN " + x + " IS NULL THEN 1 ELSE 0 END) AS c%d_nulls" % i)
        if is_map(c["type"]):
            continue
        # A blank text is no value for min/max, as the Worker's profiler counts it.
        ranged = "CASE WHEN trim(" + x + ") <> '' THEN " + x + " END" if c["text"] else x
        items += [
            "approx_count_distinct(" + x + ", 0.02) AS c%d_distinct" % i,
            "min(" + ranged + ") AS c%d_min" % i,
            "max(" + ranged + ") AS c%d_max" % i,
        ]
        kind = value_type(c["type"])
        if kind == "number":
            items.append("sum(CASE WHEN " + x + " = floor(" + x + ") THEN 1 ELSE 0 END) AS c%d_integral" % i)
        if c["text"]:
            timed = (
                "CASE WHEN " + x + " RLIKE '" + TEXT_TYPE_PATTERNS["date"] + "' OR " + x + " RLIKE '"
                + TEXT_TYPE_PATTERNS["timestamp"] + "' THEN CAST(" + x + " AS TIMESTAMP) END"
            )
            items += ["min(" + timed + ") AS c%d_tmin" % i, "max(" + timed + ") AS c%d_tmax" % i]
        # Numbers of a text column are those its numeric pattern matches, as the Worker counts them.
        n = x if kind in ("integer", "number") else (
            "CASE WHEN " + x + " RLIKE '" + numeric_rx + "' THEN CAST(" + x + " AS DOUBLE) END" if c["text"] else None
        )
        if n is not None:
            items += [
                "min(" + n + ") AS c%d_nmin" % i,
                "max(" + n + ") AS c%d_nmax" % i,
                "avg(" + n + ") AS c%d_mean" % i,
                # Sample standard deviation, as the Worker's profiler (stddev_samp; none for one value).
                "stddev_samp(" + n + ") AS c%d_stddev" % i,
                "percentile_approx(" + n + ", array(" + points + "), 10000) AS c%d_quantiles" % i,
            ]
        if c["text"]:
            items += [
                "sum(CASE WHEN trim(" + x + ") = '' THEN 1 ELSE 0 END) AS c%d_empties" % i,
                "avg(length(" + x + ")) AS c%d_mean_length" % i,
            ]
            for t, rx in TEXT_TYPE_PATTERNS.items():
                items.append("sum(CASE WHEN " + x + " RLIKE '" + rx + "' THEN 1 ELSE 0 END) AS c%d_tt_%s" % (i, t))
    ids = options.get("id_attributes") or []
    if ids:
        items.append("count(DISTINCT struct(" + ", ".join(quote(a) for a in ids) + ")) AS distinct_ids")
    if ts_expr:
        items.append("max(" + ts_expr + ") AS freshness")
    return "SELECT " + ", ".join(items) + " FROM " + relation


def profile_rows(spark, columns, options, relation, ts_expr, limited):
    """The profile of the rows of `relation` (a view or a FROM item with its alias)."""
    scalar = spark.sql(aggregate_sql(columns, options, relation, ts_expr)).collect()[0].asDict()
    comparable = [quote(c["name"]) for c in columns if not is_map(c["type"])]
    distinct_rows = None
    if comparable:
        distinct_rows = spark.sql(
            "SELECT count(*) AS n FROM (SELECT DISTINCT " + ", ".join(comparable) + " FROM " + relation + ") d"
        ).collect()[0]["n"]
    per_column = {}
    for i, c in enumerate(columns):
        agg = {key: scalar.get("c%d_%s" % (i, key)) for key in AGGREGATE_KEYS}
        agg["text_types"] = {t: int(scalar.get("c%d_tt_%s" % (i, t)) or 0) for t in TEXT_TYPE_PATTERNS}
        if is_map(c["type"]):
            per_column[c["name"]] = (agg, [], [])
            continue
        x = quote(c["name"])
        top = spark.sql(
            "SELECT CAST(" + x + " AS STRING) AS k, count(*) AS n FROM " + relation + " WHERE " + x
            + " IS NOT NULL GROUP BY 1 ORDER BY n DESC, k LIMIT " + str(TOP_K)
        ).collect()
        shapes = spark.sql(
            "SELECT " + pattern_sql(x) + " AS k, count(*) AS n FROM " + relation + " WHERE " + x
            + " IS NOT NULL GROUP BY 1 ORDER BY n DESC, k LIMIT " + str(TOP_K)
        ).collect()
        per_column[c["name"]] = (agg, [(r["k"], r["n"]) for r in top], [(r["k"], r["n"]) for r in shapes])
    totals = {
        "rows": scalar["rows"],
        "distinct_ids": scalar.get("distinct_ids"),
        "distinct_rows": distinct_rows,
        "freshness": scalar.get("freshness"),
        "limited": limited,
    }
    return shape_profile(columns, totals, per_column, options)


AGGREGATE_KEYS = ("nulls", "distinct", "min", "max", "nmin", "nmax", "tmin", "tmax", "integral", "mean", "stddev", "quantiles", "empties", "mean_length")


def profile_dataframe(spark, df, options):
    """Profiles a DataFrame with Spark SQL. The rows (sampled, filtered, limited) are cached once
    (CACHE TABLE reads the source a single time); one wide aggregate, then top values and shapes
    per column; the same again per segment value when `segments` is set."""
    df.createOrReplaceTempView("dq_source")
    columns = columns_of(df)
    ts_expr = timestamp_expr(columns, options)
    limited = bool(options.get("limit"))
    spark.sql("CACHE TABLE dq_rows AS " + rows_sql(options, ts_expr))
    try:
        profile = profile_rows(spark, columns, options, "dq_rows", ts_expr, limited)
        segments = []
        for attribute, values in sorted((options.get("segments") or {}).items()):
            for value in values:
                relation = "(SELECT * FROM dq_rows WHERE " + in_values(attribute, [value]) + ") s"
                segments.append({
                    "attribute": attribute,
                    "value": clip("null" if value is None else str(value)),
                    "profile": profile_rows(spark, columns, options, relation, ts_expr, limited),
                })
            relation = "(SELECT * FROM dq_rows WHERE " + in_values(attribute, values, none=True) + ") s"
            segments.append({
                "attribute": attribute,
                "value": OTHER_SEGMENT,
                "profile": profile_rows(spark, columns, options, relation, ts_expr, limited),
            })
        if segments:
            profile["segments"] = segments
        return profile
    finally:
        spark.sql("UNCACHE TABLE IF EXISTS dq_rows")


def write_text(spark, uri, text):  # pragma: no cover - needs Spark
    """Writes one text object through the cluster's Hadoop file system (s3/s3a, gs, abfss)."""
    jvm = spark.sparkContext._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())
    out = fs.create(path, True)
    try:
        out.write(bytearray(text.encode("utf-8")))
    finally:
        out.close()


def main(argv=None):  # pragma: no cover - needs Spark
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        from pyspark.sql import SparkSession

        spark = (
            SparkSession.builder.appName("dq-monitor " + args.job_id)
            .config("spark.sql.session.timeZone", "UTC")
            # A text that is no number or time casts to NULL, as the Worker skips it (Spark 4 is ANSI).
            .config("spark.sql.ansi.enabled", "false")
            .getOrCreate()
        )
        profile = profile_dataframe(spark, read_source(spark, args.source), args.options)
        payload = result_payload(profile, args.result_uri, lambda uri, text: write_text(spark, uri, text))
    except Exception as err:  # the job reports its own failure, then fails
        post_callback(args.callback_url, args.callback_secret, failure_payload(err))
        raise
    status = post_callback(args.callback_url, args.callback_secret, payload)
    if status != 202:
        raise SystemExit("the callback was refused with HTTP %s" % status)


if __name__ == "__main__":  # pragma: no cover
    main()
