"""The driver's parts that run without Spark: arguments, result shaping, the signed callback."""

import datetime
import io
import json
import os
import sys
import unittest
import urllib.error

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import dq_profile  # noqa: E402

VECTOR = json.load(open(os.path.join(os.path.dirname(HERE), "testdata", "callback-vector.json")))
ARGS = [
    "--job-id", "job_abc",
    "--callback-url", "https://dq.example.com/api/callbacks/scans/job_abc",
    "--callback-secret", "dqcb_secret",
    "--source", '{"kind":"files","uri":"s3://b/orders/*.csv","format":"csv"}',
]


class ArgumentsTest(unittest.TestCase):
    def test_parses_what_the_worker_sends(self):
        args = dq_profile.parse_args(ARGS + ["--options", '{"id_attributes":["id"]}', "--result-uri", "s3://t/r.json"])
        self.assertEqual(args.job_id, "job_abc")
        self.assertEqual(args.source, {"kind": "files", "uri": "s3://b/orders/*.csv", "format": "csv"})
        self.assertEqual(args.options, {"id_attributes": ["id"]})
        self.assertEqual(args.result_uri, "s3://t/r.json")

    def test_refuses_what_it_cannot_run(self):
        bad = [
            ARGS[:6],  # no --source
            ARGS[:7] + ["not json"],
            ARGS[:7] + ['{"kind":"ftp"}'],
            ARGS[:7] + ['{"kind":"files","uri":"s3://b/x"}'],
            ARGS[:7] + ['{"kind":"table"}'],
            ARGS[:7] + ['["files"]'],
            ["--callback-url", "file:///etc/passwd"] + ARGS[0:2] + ARGS[4:],
        ]
        for argv in bad:
            with self.subTest(argv=argv), self.assertRaises(dq_profile.UsageError):
                dq_profile.parse_args(argv)


class SignatureTest(unittest.TestCase):
    def test_matches_the_shared_vector(self):
        self.assertEqual(dq_profile.sign(VECTOR["secret"], VECTOR["timestamp"], VECTOR["body"]), VECTOR["signature"])

    def test_signs_the_exact_body_it_sends(self):
        payload = json.loads(VECTOR["body"])
        url, headers, body = dq_profile.callback_request("https://x/cb", VECTOR["secret"], payload, now=int(VECTOR["timestamp"]))
        self.assertEqual(body.decode("utf-8"), VECTOR["body"])
        self.assertEqual(headers["X-DQ-Timestamp"], VECTOR["timestamp"])
        self.assertEqual(headers["X-DQ-Signature"], VECTOR["signature"])
        self.assertEqual(headers["Content-Type"], "application/json")


class FakeResponse:
    def __init__(self, status):
        self.status = status

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class CallbackClientTest(unittest.TestCase):
    def test_posts_signed_and_retries_server_errors_only(self):
        sent = []

        def opener(request, timeout):
            sent.append(request)
            if len(sent) == 1:
                raise urllib.error.HTTPError(request.full_url, 503, "busy", {}, io.BytesIO(b""))
            return FakeResponse(202)

        status = dq_profile.post_callback("https://x/cb", "s", {"status": "FAILED", "error": "e"}, opener=opener, pause=lambda s: None)
        self.assertEqual(status, 202)
        self.assertEqual(len(sent), 2)
        request = sent[1]
        self.assertEqual(request.get_method(), "POST")
        ts = request.get_header("X-dq-timestamp")
        self.assertEqual(request.get_header("X-dq-signature"), dq_profile.sign("s", ts, request.data.decode("utf-8")))

    def test_gives_up_at_once_on_a_refusal(self):
        calls = []

        def opener(request, timeout):
            calls.append(request)
            raise urllib.error.HTTPError(request.full_url, 409, "used", {}, io.BytesIO(b""))

        self.assertEqual(dq_profile.post_callback("https://x/cb", "s", {}, opener=opener, pause=lambda s: None), 409)
        self.assertEqual(len(calls), 1)


def sample_profile():
    columns = [
        {"name": "id", "type": "bigint", "nullable": False},
        {"name": "email", "type": "string", "nullable": True, "text": True},
        {"name": "amount", "type": "string", "nullable": True, "text": True},
        {"name": "updated_at", "type": "timestamp", "nullable": True},
    ]
    quantiles = [1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100]
    per_column = {
        "id": ({"nulls": 0, "distinct": 99, "min": 1, "max": 100, "mean": 50.5, "stddev": 28.87, "quantiles": quantiles}, [("1", 2)], [("9", 100)]),
        "email": (
            {"nulls": 10, "empties": 2, "distinct": 88, "min": "a@x.io", "max": "z@x.io", "mean_length": 11.5,
             "text_types": {}},
            [("a@x.io", 3)],
            [("a@a.a", 90)],
        ),
        "amount": ({"nulls": 0, "distinct": 40, "text_types": {"integer": 70, "numeric": 95}}, [], []),
        "updated_at": ({"nulls": 0, "distinct": 100, "min": datetime.datetime(2026, 11, 1, 8, 0), "max": datetime.datetime(2026, 11, 25, 9, 30)}, [], []),
    }
    totals = {"rows": 100, "distinct_ids": 99, "distinct_rows": 100, "freshness": datetime.datetime(2026, 11, 25, 9, 30)}
    return dq_profile.shape_profile(columns, totals, per_column, {"id_attributes": ["id"]})


class ShapeTest(unittest.TestCase):
    def test_has_the_workers_profile_shape(self):
        p = sample_profile()
        self.assertEqual(p["row_count"], 100)
        self.assertEqual(p["duplicate_count"], 1)
        self.assertEqual(p["duplicate_rows"], 0)
        self.assertEqual(p["freshness"], "2026-11-25T09:30:00Z")
        self.assertFalse(p["sampled"])
        self.assertEqual([f["name"] for f in p["schema"]], ["id", "email", "amount", "updated_at"])
        by = {a["name"]: a for a in p["attributes"]}
        self.assertEqual(by["id"]["inferred_type"], "integer")
        self.assertEqual(by["id"]["quantiles"], [float(q) for q in [1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 100]])
        self.assertEqual(by["id"]["min"], 1)
        self.assertEqual(by["id"]["type_counts"], {"integer": 100})
        self.assertEqual(by["email"]["nulls"], 10)
        self.assertEqual(by["email"]["empties"], 2)
        self.assertEqual(by["email"]["patterns"], [{"pattern": "a@a.a", "share": 1.0}])
        self.assertEqual(by["email"]["inferred_type"], "string")
        self.assertEqual(by["email"]["mean_length"], 11.5)
        self.assertNotIn("quantiles", by["email"])
        # As the Worker writes a time (isoTime: Date.toISOString).
        self.assertEqual(by["updated_at"]["max"], "2026-11-25T09:30:00.000Z")
        # The 2 blank emails are empties, of no type (the Worker counts them so).
        self.assertEqual(by["email"]["type_counts"], {"string": 88})
        for a in p["attributes"]:
            for key in ("name", "inferred_type", "count", "nulls", "empties", "distinct", "distinct_exact",
                        "top_values", "type_counts", "type_mismatches", "patterns"):
                self.assertIn(key, a)

    def test_is_the_profile_the_worker_test_checks(self):
        # spark/testdata/sample-profile.json is parsed by the Worker's callback schema (test/scan/spark).
        golden = json.load(open(os.path.join(os.path.dirname(HERE), "testdata", "sample-profile.json")))
        self.assertEqual(json.loads(dq_profile.encode(sample_profile())), golden)

    def test_types_text_columns_as_the_worker_does(self):
        by = {a["name"]: a for a in sample_profile()["attributes"]}
        # 95 of 100 values are numbers, 25 of them with decimals: a number column with 5 mismatches.
        self.assertEqual(by["amount"]["inferred_type"], "number")
        self.assertEqual(by["amount"]["type_counts"], {"integer": 70, "number": 25, "string": 5})
        self.assertEqual(by["amount"]["type_mismatches"], 5)
        self.assertEqual(dq_profile.text_typing({"date": 40, "timestamp": 20}, 100)[0], "timestamp")
        self.assertEqual(dq_profile.text_typing({"boolean": 60}, 100)[:2], ("boolean", {"boolean": 60, "string": 40}))

    def test_marks_samples(self):
        columns = [{"name": "id", "type": "int"}]
        self.assertTrue(dq_profile.shape_profile(columns, {"rows": 5}, {}, {"sample_fraction": 10})["sampled"])
        self.assertTrue(dq_profile.shape_profile(columns, {"rows": 5, "limited": True}, {}, {})["sampled"])


class ResultPayloadTest(unittest.TestCase):
    def test_inline_when_small(self):
        p = sample_profile()
        self.assertEqual(dq_profile.result_payload(p, None, None), {"status": "SUCCEEDED", "profile": p})

    def test_by_reference_when_large(self):
        p = sample_profile()
        p["attributes"] = p["attributes"] * 400
        written = {}
        payload = dq_profile.result_payload(p, "s3://t/spark-results/t/job/profile.json", lambda uri, text: written.update({uri: text}))
        self.assertEqual(payload["status"], "SUCCEEDED")
        text = written["s3://t/spark-results/t/job/profile.json"]
        self.assertEqual(payload["profile_ref"], {"bytes": len(text.encode("utf-8"))})
        self.assertEqual(json.loads(text)["row_count"], 100)
        self.assertLessEqual(len(dq_profile.encode(payload)), dq_profile.CALLBACK_MAX_BYTES)

    def test_fails_when_large_without_storage(self):
        p = sample_profile()
        p["attributes"] = p["attributes"] * 400
        self.assertEqual(dq_profile.result_payload(p, None, None)["status"], "FAILED")

    def test_failure_is_bounded(self):
        self.assertEqual(dq_profile.failure_payload(ValueError("x" * 9000))["error"], "x" * 4000)


class FilePatternTest(unittest.TestCase):
    def test_reads_double_star_recursively(self):
        self.assertEqual(dq_profile.file_pattern("s3://b/p/*.csv"), ("s3://b/p/*.csv", {}))
        self.assertEqual(
            dq_profile.file_pattern("gs://b/events/**/*.parquet"),
            ("gs://b/events/", {"recursiveFileLookup": "true", "pathGlobFilter": "*.parquet"}),
        )
        self.assertEqual(dq_profile.file_pattern("s3a://b/x/**"), ("s3a://b/x/", {"recursiveFileLookup": "true"}))
        for bad in ("s3://b/**/2024/*.csv", "s3://b/*/x/**/*.csv", "s3://b/x**.csv"):
            with self.subTest(bad), self.assertRaises(dq_profile.UsageError):
                dq_profile.file_pattern(bad)


class SqlTextTest(unittest.TestCase):
    def test_quotes_identifiers_and_filter_values(self):
        self.assertEqual(dq_profile.quote("a`b"), "`a``b`")
        where = dq_profile.where_sql({"filter": {"country": ["DE", "it's"]}})
        self.assertEqual(where, " WHERE CAST(`country` AS STRING) IN ('DE', 'it\\'s')")
        self.assertEqual(dq_profile.where_sql({}), "")

    def test_shape_expression_names_the_classes(self):
        sql = dq_profile.pattern_sql("`email`")
        for piece in ("\\\\p{Lu}", "'A'", "\\\\p{Ll}", "'a'", "'[0-9]', '9'", "(.)\\\\1+", "64"):
            self.assertIn(piece, sql)


if __name__ == "__main__":
    unittest.main()
