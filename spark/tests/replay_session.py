"""The driver's profile_dataframe under a SparkSession stand-in that answers each statement from a
list of results given on stdin, for test/scan/spark/parity.unit.test.ts (which evaluates the
statements on DuckDB). Two runs with the same schema and options issue the same statements:

    echo '{"columns": [["id", "string"], …], "options": {…}}' | python3 replay_session.py
        → {"statements": [...]}                                  (every aggregate answered 0)
    echo '{…, "results": [[{row}, …], …]}' | python3 replay_session.py
        → {"statements": [...], "profile": {…}}                  (the driver's profile of those results)

A value {"$ts": "2026-01-01T00:00:00"} in a result is a naive datetime, as Spark returns a timestamp.
"""

import datetime
import json
import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import dq_profile  # noqa: E402


def _value(v):
    if isinstance(v, dict) and "$ts" in v:
        return datetime.datetime.fromisoformat(v["$ts"])
    return v


class Row(dict):
    def asDict(self):
        return dict(self)


class Blank(Row):
    """The recording run's answer: every aggregate is 0, so the driver goes on to its next statement."""

    def __missing__(self, key):
        return 0

    def asDict(self):
        return self

    def get(self, key, default=None):
        return 0


class Result:
    def __init__(self, rows):
        self.rows = rows

    def collect(self):
        return self.rows


class Session:
    def __init__(self, results):
        self.results = results
        self.statements = []

    def sql(self, statement):
        self.statements.append(statement)
        if self.results is None:
            rows = [Blank()]
        else:
            rows = [Row({k: _value(v) for k, v in r.items()}) for r in self.results[len(self.statements) - 1]]
        return Result(rows)


class Frame:
    def __init__(self, columns):
        self.schema = types.SimpleNamespace(
            fields=[
                types.SimpleNamespace(name=n, nullable=True, dataType=types.SimpleNamespace(simpleString=lambda t=t: t))
                for n, t in columns
            ]
        )

    def createOrReplaceTempView(self, name):
        pass


def main():
    request = json.load(sys.stdin)
    session = Session(request.get("results"))
    out = {"statements": session.statements}
    profile = dq_profile.profile_dataframe(session, Frame(request["columns"]), request.get("options") or {})
    if request.get("results") is not None:
        out["profile"] = profile
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
