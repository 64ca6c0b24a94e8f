"""Tests of fake_llm.py and fake_mcp.py, driven by the real `openai` and `mcp` (1.x) clients.

Run with a Python that has both packages, e.g. the fast-agent 0.7.22 venv:
    VENV/bin/python -m unittest test_fakes -v      (from certify/fast-agent)
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import threading
import time
import unittest
from http.server import ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fake_llm  # noqa: E402

TOOLS = [
    {"type": "function", "function": {"name": "downstream__add", "parameters": {"type": "object"}}},
    {"type": "function", "function": {"name": "downstream__echo", "parameters": {"type": "object"}}},
]


def wait_for_file(path: Path, proc: subprocess.Popen, seconds: float = 30.0) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        if proc.poll() is not None:
            raise RuntimeError(f"process exited with {proc.returncode}")
        time.sleep(0.05)
    raise TimeoutError(f"{path} not written within {seconds}s")


class PlanReplyTest(unittest.TestCase):
    def test_plan_calls_the_tool_whose_name_ends_with_the_suffix(self):
        body = {"messages": [{"role": "user", "content": "hi"}], "tools": TOOLS}
        self.assertEqual(fake_llm.plan_reply(body, "echo", {"text": "x"}),
                         {"tool": "downstream__echo", "arguments": {"text": "x"}})

    def test_plan_answers_with_the_tool_result_after_a_tool_message(self):
        body = {"messages": [{"role": "user", "content": "hi"},
                             {"role": "tool", "tool_call_id": "c", "content": "echo: x"}], "tools": TOOLS}
        self.assertEqual(fake_llm.plan_reply(body, "echo", {}), {"text": "done: echo: x"})

    def test_plan_does_not_match_a_suffix_inside_a_longer_name(self):
        body = {"messages": [{"role": "user", "content": "hi"}],
                "tools": [{"type": "function", "function": {"name": "downstream__reecho"}}]}
        self.assertEqual(fake_llm.plan_reply(body, "echo", {}), {"text": "no tool matching echo"})


class FakeLlmOverHttpTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.log = Path(self.tmp.name) / "llm.jsonl"
        state = fake_llm._State(self.log, "echo", {"text": "hi"})
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), fake_llm.make_handler(state))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        from openai import OpenAI

        self.client = OpenAI(base_url=f"http://127.0.0.1:{self.server.server_address[1]}/v1",
                             api_key="sk-test-secret", timeout=10, max_retries=0)

    def tearDown(self):
        self.server.shutdown()
        self.server.server_close()
        self.tmp.cleanup()

    def test_streamed_reply_is_a_tool_call_the_openai_client_reassembles(self):
        stream = self.client.chat.completions.create(
            model="fake-model", messages=[{"role": "user", "content": "hi"}], tools=TOOLS,
            stream=True, stream_options={"include_usage": True})
        name, args, finish, usage = "", "", None, None
        for chunk in stream:
            usage = chunk.usage or usage
            for choice in chunk.choices:
                for call in choice.delta.tool_calls or []:
                    name += call.function.name or ""
                    args += call.function.arguments or ""
                finish = choice.finish_reason or finish
        self.assertEqual(name, "downstream__echo")
        self.assertEqual(json.loads(args), {"text": "hi"})
        self.assertEqual(finish, "tool_calls")
        self.assertIsNotNone(usage)

    def test_non_streamed_reply_after_a_tool_result_is_final_text(self):
        reply = self.client.chat.completions.create(
            model="fake-model", tools=TOOLS,
            messages=[{"role": "user", "content": "hi"},
                      {"role": "assistant", "content": None, "tool_calls": [{
                          "id": "call_1", "type": "function",
                          "function": {"name": "downstream__echo", "arguments": "{}"}}]},
                      {"role": "tool", "tool_call_id": "call_1", "content": "echo: hi"}])
        self.assertEqual(reply.choices[0].message.content, "done: echo: hi")
        self.assertEqual(reply.choices[0].finish_reason, "stop")

    def test_request_log_redacts_the_api_key(self):
        self.client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
        text = self.log.read_text()
        self.assertNotIn("sk-test-secret", text)
        record = json.loads(text.splitlines()[0])
        self.assertEqual(record["headers"]["Authorization"], fake_llm.REDACTED)
        self.assertEqual(record["body"]["model"], "m")


class FakeMcpTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        tmp = Path(self.tmp.name)
        self.log = tmp / "headers.jsonl"
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "fake_mcp.py"), "--log", str(self.log),
             "--url-file", str(tmp / "url")],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.url = wait_for_file(tmp / "url", self.proc)

    def tearDown(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.tmp.cleanup()

    def test_tools_answer_and_steps_reports_progress(self):
        import httpx
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        async def run():
            seen = []

            async def on_progress(progress, total, message):
                seen.append((progress, total, message))

            http = httpx.AsyncClient(headers={"Authorization": "Bearer abcdef"}, timeout=10)
            async with http, streamable_http_client(self.url, http_client=http) as (read, write, _):
                async with ClientSession(read, write) as session:
                    await session.initialize()
                    tools = sorted(t.name for t in (await session.list_tools()).tools)
                    echo = await session.call_tool("echo", {"text": "x"})
                    steps = await session.call_tool("steps", {"n": 2}, progress_callback=on_progress)
                    fail = await session.call_tool("fail", {"reason": "boom"})
            return tools, echo, steps, fail, seen

        tools, echo, steps, fail, seen = asyncio.run(asyncio.wait_for(run(), 30))
        self.assertEqual(tools, ["add", "echo", "fail", "steps"])
        self.assertEqual(echo.content[0].text, "echo: x")
        self.assertEqual(steps.content[0].text, "stepped 2")
        self.assertEqual(seen, [(1.0, 2.0, "step 1 of 2"), (2.0, 2.0, "step 2 of 2")])
        self.assertTrue(fail.isError)
        self.assertIn("boom", fail.content[0].text)
        logged = [json.loads(line) for line in self.log.read_text().splitlines()]
        self.assertIn("Bearer <redacted:6 chars>", {r["headers"].get("authorization") for r in logged})
        self.assertNotIn("abcdef", self.log.read_text())


if __name__ == "__main__":
    unittest.main()
