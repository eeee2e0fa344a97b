"""The driver end to end (main) under a recording stand-in for SparkSession, with arguments as the
Worker dispatches them (src/pipeline/spark-dispatch.ts dispatchFullScan, driverSource), posting its
signed callback to a local HTTP server.

The stand-in answers as Spark's analyzer does where it matters: a MAP column in min/max, GROUP BY or
DISTINCT is refused; max() of a text column is text, of a cast or a timestamp column a datetime.
Every statement and every posted body is kept in spark/testdata/driver-runs.json, which
test/scan/spark/driver-statements.unit.test.ts parses with a Spark SQL grammar (dt-sql-parser) and the
Worker's callback schema. DQ_UPDATE_GOLDEN=1 rewrites the file; otherwise it must match.
"""

import datetime
import http.server
import json
import os
import re
import sys
import threading
import types
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import dq_profile  # noqa: E402

GOLDEN = os.path.join(os.path.dirname(HERE), "testdata", "driver-runs.json")
SECRET = "dqcb_0123456789abcdef"
LONG = "x" * 5000 + "\U0001F600"

CSV = [("id", "string"), ("country", "string"), ("amount", "string"), ("updated_at", "string"), ("note", "string")]
TYPED = [("id", "bigint"), ("country", "string"), ("amount", "double"), ("updated_at", "timestamp"), ("note", "string")]
WITH_MAP = TYPED + [("attrs", "map<string,string>")]
NUMERIC_TEXT = {"id", "amount"}

# (name, --source as driverSource builds it, --options as the scan pipeline builds them, schema)
CASES = [
    ("csv filter + sample + limit", {"kind": "files", "uri": "s3://landing/orders/**/*.csv", "format": "csv"},
     {"filter": {"country": ["DE", "it's", None]}, "sample_fraction": 10, "limit": 1000,
      "timestamp_attribute": "updated_at", "id_attributes": ["id"], "breakdown": False}, CSV),
    ("csv delta_only", {"kind": "files", "uri": "gs://raw/orders/*.csv", "format": "csv", "delimiter": ";"},
     {"timestamp_attribute": "updated_at", "delta_only": True, "last_max_timestamp": "2026-11-20T00:00:00.000Z",
      "breakdown": False}, CSV),
    ("delta delta_only + sample", {"kind": "table", "format": "delta", "table": "main.sales.orders"},
     {"timestamp_attribute": "updated_at", "delta_only": True, "last_max_timestamp": "2026-11-20T00:00:00.000Z",
      "sample_fraction": 5, "breakdown": False}, TYPED),
    ("parquet with a MAP column", {"kind": "files", "uri": "s3a://b/events/*.parquet", "format": "parquet"},
     {"id_attributes": ["id"], "breakdown": False}, WITH_MAP),
    ("iceberg", {"kind": "iceberg", "metastore_uri": "thrift://metastore:9083", "table": "lake.orders"},
     {"timestamp_attribute": "updated_at", "breakdown": False}, TYPED),
    ("jdbc", {"kind": "jdbc", "table": "public.orders"}, {"limit": 500, "breakdown": False}, TYPED),
    ("oracle jdbc", {"kind": "jdbc", "table": "SALES.ORDERS", "db_type": "oracle"}, {"breakdown": False}, TYPED),
    ("bigquery", {"kind": "table", "format": "bigquery", "table": "p-1.sales.orders"}, {"breakdown": False}, TYPED),
    ("segments", {"kind": "files", "uri": "s3://landing/orders/*.csv", "format": "csv"},
     {"segments": {"country": ["DE", None]}, "timestamp_attribute": "updated_at", "breakdown": False}, CSV[:4]),
]


class AnalysisException(Exception):
    pass


class DataType:
    def __init__(self, text):
        self.text = text

    def simpleString(self):
        return self.text


class Field:
    def __init__(self, name, type_):
        self.name, self.dataType, self.nullable = name, DataType(type_), True


class Row(dict):
    def asDict(self):
        return dict(self)


class Result:
    """A DataFrame of a statement: collected, or kept as a view."""

    def __init__(self, rows, session=None):
        self.rows, self.session = rows, session

    def createOrReplaceTempView(self, name):
        self.session.calls.append(["view", name])

    def collect(self):
        return self.rows


class Frame:
    def __init__(self, session):
        self.session = session
        self.schema = types.SimpleNamespace(fields=[Field(n, t) for n, t in session.columns])

    def createOrReplaceTempView(self, name):
        self.session.calls.append(["view", name])


class Reader:
    def __init__(self, session):
        self.session = session

    def option(self, key, value):
        self.session.calls.append(["option", key, value])
        return self

    def format(self, fmt):
        self.session.calls.append(["format", fmt])
        return self

    def _read(self, kind, uri=None):
        self.session.calls.append([kind] + ([uri] if uri else []))
        return Frame(self.session)

    def csv(self, uri):
        return self._read("csv", uri)

    def json(self, uri):
        return self._read("json", uri)

    def parquet(self, uri):
        return self._read("parquet", uri)

    def load(self):
        return self._read("load")


class Session:
    """Records what the driver asks of Spark; answers like Spark's analyzer and executor would."""

    columns = []
    current = None

    def __init__(self):
        self.calls, self.statements = [], []
        self.columns = list(Session.columns)
        self.conf = types.SimpleNamespace(set=lambda k, v: self.calls.append(["conf", k, v]))
        self.read = Reader(self)
        Session.current = self

    def table(self, name):
        self.calls.append(["table", name])
        return Frame(self)

    def sql(self, statement):
        self.statements.append(statement)
        self._analyze(statement)
        if statement.startswith(("CACHE TABLE", "UNCACHE TABLE", "SELECT * FROM dq_source")):
            return Result([], self)
        if "SELECT DISTINCT" in statement:
            return Result([Row(n=10)])
        if "GROUP BY 1" in statement:
            return Result([Row(k=LONG if "`note`" in statement else "9", n=3), Row(k="DE", n=2)])
        return Result([self._aggregate(statement)])

    def _analyze(self, statement):
        """Spark refuses a MAP in min/max, hashing (approx_count_distinct), GROUP BY and DISTINCT."""
        for name, t in self.columns:
            if "map<" not in t:
                continue
            x = re.escape("`" + name + "`")
            grouped = "GROUP BY" in statement and re.search(x, statement.split(" FROM ")[0])
            if (
                re.search(r"(min|max|approx_count_distinct)\(" + x, statement)
                or grouped
                or re.search(r"SELECT DISTINCT (\*|[^)]*" + x + ")", statement)
                or re.search(r"count\(DISTINCT struct\([^)]*" + x, statement)
            ):
                raise AnalysisException("cannot use a map<...> column %s in %s" % (name, statement[:80]))

    def _aggregate(self, statement):
        types_ = dict(self.columns)
        names = [n for n, _ in self.columns]
        row = Row()
        for alias in re.findall(r" AS (rows|distinct_ids|freshness|c\d+_[a-z_]+)\b", statement):
            if alias == "rows":
                row[alias] = 10
            elif alias == "distinct_ids":
                row[alias] = 9
            elif alias == "freshness":
                expr = re.search(r"max\(([^()]*(?:\([^()]*\))?[^()]*)\) AS freshness", statement).group(1)
                column = re.search(r"`([^`]+)`", expr).group(1)
                timed = expr.startswith("CAST(") or types_[column] == "timestamp"
                row[alias] = datetime.datetime(2026, 11, 25, 9, 30) if timed else "2026-11-25 09:30:00"
            else:
                i, key = re.match(r"c(\d+)_([a-z_]+)$", alias).groups()
                name = names[int(i)]
                t = types_[name]
                row[alias] = self._value(name, t, key)
        return row

    @staticmethod
    def _value(name, t, key):
        if key in ("min", "max"):
            if t == "string":
                return LONG if key == "max" and name == "note" else "1"
            if t == "timestamp":
                return datetime.datetime(2026, 11, 1 if key == "min" else 25, 8, 0)
            return 1 if key == "min" else 9
        if key in ("nmin", "nmax"):
            return 1.0 if key == "nmin" else 9.0
        if key in ("tmin", "tmax"):  # CAST(text AS TIMESTAMP): a datetime, or NULL when none is a time
            return datetime.datetime(2026, 11, 1 if key == "tmin" else 25, 8, 0) if name == "updated_at" else None
        if key == "integral":
            return 2
        if key == "quantiles":
            return [float(x) for x in range(1, 12)]
        if key.startswith("tt_"):
            if name in NUMERIC_TEXT and key[3:] in ("integer", "numeric"):
                return 9
            if name == "updated_at" and key == "tt_timestamp":
                return 9
            return 0
        return {"nulls": 1, "distinct": 5, "mean": 5.0, "stddev": 2.5, "empties": 0, "mean_length": 3.0}[key]


class Builder:
    def appName(self, name):
        return self

    def config(self, key, value):
        Builder.conf[key] = value
        return self

    def getOrCreate(self):
        return Session()


Builder.conf = {}


def install_stand_in():
    pyspark = types.ModuleType("pyspark")
    sql = types.ModuleType("pyspark.sql")
    sql.SparkSession = types.SimpleNamespace(builder=Builder())
    pyspark.sql = sql
    sys.modules["pyspark"], sys.modules["pyspark.sql"] = pyspark, sql


class Callbacks(http.server.BaseHTTPRequestHandler):
    received = []

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"])).decode("utf-8")
        Callbacks.received.append({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body})
        self.send_response(202)
        self.end_headers()

    def log_message(self, *args):
        pass


def worker_args(job_id, url, source, options):
    """dispatchFullScan's arguments (src/pipeline/spark-dispatch.ts): JSON.stringify is compact."""
    compact = lambda v: json.dumps(v, separators=(",", ":"), ensure_ascii=False)  # noqa: E731
    return ["--job-id", job_id, "--callback-url", url, "--callback-secret", SECRET,
            "--source", compact(source), "--options", compact(options)]


class DriverRunTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        install_stand_in()
        os.environ["DQ_JDBC_URL"] = "jdbc:postgresql://db:5432/shop"
        cls.server = http.server.HTTPServer(("127.0.0.1", 0), Callbacks)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.runs = []
        for n, (name, source, options, columns) in enumerate(CASES):
            Session.columns = columns
            Callbacks.received = []
            job = "job_case%02d" % n
            url = "http://127.0.0.1:%d/api/callbacks/scans/%s" % (cls.server.server_port, job)
            try:
                dq_profile.main(worker_args(job, url, source, options))
            except Exception:  # the driver posts its failure, then fails the step: kept for the checks
                pass
            session = Session.current
            (posted,) = Callbacks.received
            cls.runs.append({"name": name, "source": source, "options": options, "calls": session.calls,
                             "statements": session.statements, "posted": posted})

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()

    def run_of(self, name):
        return next(r for r in self.runs if r["name"] == name)

    def test_every_run_posts_a_signed_success(self):
        for run in self.runs:
            with self.subTest(run["name"]):
                headers = run["posted"]["headers"]
                self.assertEqual(headers["x-dq-signature"], dq_profile.sign(SECRET, headers["x-dq-timestamp"], run["posted"]["body"]))
                self.assertEqual(json.loads(run["posted"]["body"])["status"], "SUCCEEDED")

    def test_samples_the_relation_before_filtering(self):
        cache = self.run_of("csv filter + sample + limit")["statements"][0]
        self.assertTrue(cache.startswith("CACHE TABLE dq_rows AS SELECT * FROM dq_source TABLESAMPLE (10.0 PERCENT) WHERE "), cache)
        self.assertTrue(cache.endswith(" ORDER BY CAST(`updated_at` AS TIMESTAMP) DESC LIMIT 1000"), cache)

    def test_reads_the_source_once(self):
        for run in self.runs:
            with self.subTest(run["name"]):
                uses = [s for s in run["statements"] if "dq_source" in s]
                self.assertEqual(len(uses), 1)
                self.assertTrue(uses[0].startswith("CACHE TABLE dq_rows AS "))
                self.assertEqual(run["statements"][-1], "UNCACHE TABLE IF EXISTS dq_rows")

    def test_reads_the_named_tables(self):
        self.assertIn(["table", "dq.lake.orders"], self.run_of("iceberg")["calls"])
        self.assertIn(["option", "dbtable", "public.orders"], self.run_of("jdbc")["calls"])
        recursive = self.run_of("csv filter + sample + limit")["calls"]
        for call in (["option", "recursiveFileLookup", "true"], ["option", "pathGlobFilter", "*.csv"], ["csv", "s3://landing/orders/"]):
            self.assertIn(call, recursive)
        self.assertIn(["option", "driver", "oracle.jdbc.OracleDriver"], self.run_of("oracle jdbc")["calls"])
        self.assertIn(["option", "dbtable", "SALES.ORDERS"], self.run_of("oracle jdbc")["calls"])
        self.assertIn(["option", "table", "p-1.sales.orders"], self.run_of("bigquery")["calls"])
        self.assertIn(["table", "main.sales.orders"], self.run_of("delta delta_only + sample")["calls"])

    def test_texts_fit_the_callback_and_csv_freshness_is_iso(self):
        profile = json.loads(self.run_of("csv delta_only")["posted"]["body"])["profile"]
        self.assertEqual(profile["freshness"], "2026-11-25T09:30:00Z")
        note = next(a for a in profile["attributes"] if a["name"] == "note")
        self.assertLessEqual(len(note["max"].encode("utf-16-le")) // 2, dq_profile.MAX_TEXT)
        self.assertTrue(note["max"].endswith("\u2026"))
        self.assertEqual(note["top_values"][0]["value"], "x" * 200 + "\u2026")

    def test_csv_numbers_have_numeric_metrics(self):
        profile = json.loads(self.run_of("csv delta_only")["posted"]["body"])["profile"]
        amount = next(a for a in profile["attributes"] if a["name"] == "amount")
        self.assertEqual(amount["inferred_type"], "integer")
        self.assertEqual((amount["min"], amount["max"], amount["mean"], amount["stddev"]), (1, 9, 5.0, 2.5))
        self.assertEqual(len(amount["quantiles"]), 11)

    def test_segments_are_profiled(self):
        profile = json.loads(self.run_of("segments")["posted"]["body"])["profile"]
        self.assertEqual([(s["attribute"], s["value"]) for s in profile["segments"]],
                         [("country", "DE"), ("country", "null"), ("country", "(other)")])

    def test_matches_the_kept_runs(self):
        kept = [{k: r[k] for k in ("name", "statements")} | {"body": r["posted"]["body"]} for r in self.runs]
        if os.environ.get("DQ_UPDATE_GOLDEN"):
            with open(GOLDEN, "w", encoding="utf-8") as f:
                json.dump(kept, f, indent=2, ensure_ascii=False)
                f.write("\n")
        with open(GOLDEN, encoding="utf-8") as f:
            self.assertEqual(json.load(f), kept)


if __name__ == "__main__":
    unittest.main()
