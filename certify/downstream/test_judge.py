"""Unit tests of certify/downstream/judge.py: how a run of the official suite's client scenario
is read (`python3 -m unittest discover -s certify/downstream -p 'test_*.py'`)."""

import json
import os
import tempfile
import unittest

import judge


def run(checks, scenario="tools_call"):
    out = tempfile.mkdtemp()
    d = os.path.join(out, "bridge", f"{scenario.replace('/', '-')}-2026-11-29T10-00-00-000Z")
    os.makedirs(d)
    if checks is not None:
        with open(os.path.join(d, "checks.json"), "w") as f:
            json.dump(checks, f)
    return judge.outcome(out, "bridge", scenario)


class Outcome(unittest.TestCase):
    def test_a_success_passes(self):
        self.assertEqual(
            run([{"id": "tool-add-numbers", "status": "SUCCESS"}]), ("pass", ["tool-add-numbers"])
        )

    def test_a_failure_fails_with_its_check(self):
        got = run([
            {"id": "incoming-request", "status": "INFO"},
            {"id": "client-sse-graceful-reconnect", "status": "SUCCESS"},
            {"id": "client-sse-retry-timing", "status": "FAILURE"},
            {"id": "client-sse-last-event-id", "status": "WARNING"},
        ], "sse-retry")
        self.assertEqual(got, ("fail", ["client-sse-retry-timing"]))

    def test_a_warning_alone_warns(self):
        got = run([{"id": "a", "status": "SUCCESS"}, {"id": "b", "status": "WARNING"}])
        self.assertEqual(got, ("warn", ["b"]))

    def test_nothing_judged_is_an_error_never_a_pass(self):
        self.assertEqual(run([{"id": "incoming-request", "status": "INFO"}])[0], "error")
        self.assertEqual(run([])[0], "error")

    def test_no_results_is_an_error(self):
        self.assertEqual(run(None)[0], "error")


if __name__ == "__main__":
    unittest.main()
