"""Interop: the official OpenAI, Anthropic and MCP SDKs against `pallas-mocks up`.

Needs PALLAS_MOCKS_BIN (path to a built `pallas-mocks`). Starts it on the example ecosystem with
`--urls-out`, waits for the file, and drives every mock with the SDK real users point at it.
"""

import asyncio
import json
import os
import signal
import subprocess
import time
from pathlib import Path

import anthropic
import openai
import pytest

HERE = Path(__file__).resolve().parent
ECOSYSTEM = HERE.parent / "examples" / "ecosystem.yaml"


@pytest.fixture(scope="session")
def urls(tmp_path_factory):
    binary = os.environ.get("PALLAS_MOCKS_BIN")
    if not binary:
        pytest.fail("set PALLAS_MOCKS_BIN to a built pallas-mocks binary")
    out = tmp_path_factory.mktemp("mocks") / "urls.json"
    proc = subprocess.Popen(
        [binary, "up", str(ECOSYSTEM), "--urls-out", str(out)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not out.exists():
        if proc.poll() is not None:
            pytest.fail(f"pallas-mocks exited early: {proc.stderr.read().decode()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("pallas-mocks did not write its URL file in 30 s")
        time.sleep(0.02)
    try:
        yield json.loads(out.read_text())
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=10) == 0, "pallas-mocks must exit 0 on SIGTERM"
        except subprocess.TimeoutExpired:
            proc.kill()
            raise


def journal(url_base: str):
    import urllib.request

    with urllib.request.urlopen(f"{url_base}/__mock/journal", timeout=10) as r:
        return json.loads(r.read())


def origin(url: str) -> str:
    # http://127.0.0.1:P/v1 or http://127.0.0.1:P/mcp -> http://127.0.0.1:P
    return "/".join(url.split("/")[:3])


# --- OpenAI -------------------------------------------------------------------------------------


def test_openai_sdk_streams_text(urls):
    client = openai.OpenAI(base_url=urls["openai"], api_key="sk-test", max_retries=0)
    stream = client.chat.completions.create(
        model="gpt-4.1-mini",
        messages=[{"role": "user", "content": "hello from the openai sdk"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text, usage = "", None
    for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            text += chunk.choices[0].delta.content
        if chunk.usage:
            usage = chunk.usage
    assert text == "hello from the openai sdk"
    assert usage is not None and usage.total_tokens == usage.prompt_tokens + usage.completion_tokens


def test_openai_sdk_tool_call_round_trip(urls):
    client = openai.OpenAI(base_url=urls["openai"], api_key="sk-test", max_retries=0)
    tools = [{"type": "function", "function": {"name": "argos__search_web",
              "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]
    messages = [{"role": "user", "content": 'CALL_TOOL argos__search_web {"query": "owls"}\nCALL_TOOL kernos__run'}]
    # Streaming tool calls, accumulated by index as real agents do.
    calls = {}
    for chunk in client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=tools, stream=True):
        for tc in (chunk.choices[0].delta.tool_calls or []) if chunk.choices else []:
            c = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            c["id"] += tc.id or ""
            c["name"] += (tc.function.name or "") if tc.function else ""
            c["arguments"] += (tc.function.arguments or "") if tc.function else ""
    assert [calls[i]["name"] for i in sorted(calls)] == ["argos__search_web", "kernos__run"]
    assert json.loads(calls[0]["arguments"]) == {"query": "owls"}
    # Non-streaming: the same request gives parsed tool calls; then feed results back.
    resp = client.chat.completions.create(model="gpt-4.1-mini", messages=messages, tools=tools)
    msg = resp.choices[0].message
    assert resp.choices[0].finish_reason == "tool_calls"
    assert len(msg.tool_calls) == 2
    follow = messages + [msg.model_dump(exclude_none=True)] + [
        {"role": "tool", "tool_call_id": tc.id, "content": f"result of {tc.function.name}"}
        for tc in msg.tool_calls
    ]
    final = client.chat.completions.create(model="gpt-4.1-mini", messages=follow, tools=tools)
    assert "result of argos__search_web" in final.choices[0].message.content
    assert "result of kernos__run" in final.choices[0].message.content


def test_openai_sdk_sees_unknown_model_as_not_found(urls):
    client = openai.OpenAI(base_url=urls["openai"], api_key="sk-test", max_retries=0)
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(model="no-such-model", messages=[{"role": "user", "content": "x"}])
    assert [m.id for m in client.models.list()] == ["gpt-4.1-mini", "mock-model"]


# --- Anthropic ----------------------------------------------------------------------------------


def test_anthropic_sdk_streams_scripted_text(urls):
    client = anthropic.Anthropic(base_url=urls["anthropic"], api_key="ak-test", max_retries=0)
    with client.messages.stream(
        model="claude-sonnet-4-6", max_tokens=100,
        messages=[{"role": "user", "content": "weather in Athens"}],
    ) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "It is sunny in weather in Athens."
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens > 0


def test_anthropic_sdk_tool_use_round_trip(urls):
    client = anthropic.Anthropic(base_url=urls["anthropic"], api_key="ak-test", max_retries=0)
    tools = [{"name": "neo4j__read_neo4j_cypher", "input_schema": {"type": "object"}},
             {"name": "kernos__run", "input_schema": {"type": "object"}}]
    messages = [{"role": "user", "content": 'CALL_TOOL neo4j__read_neo4j_cypher {"query": "MATCH (n) RETURN n"}\nCALL_TOOL kernos__run {}'}]
    with client.messages.stream(model="claude-sonnet-4-6", max_tokens=100, messages=messages, tools=tools) as stream:
        final = stream.get_final_message()
    uses = [b for b in final.content if b.type == "tool_use"]
    assert [u.name for u in uses] == ["neo4j__read_neo4j_cypher", "kernos__run"]
    assert uses[0].input == {"query": "MATCH (n) RETURN n"}
    assert uses[1].input == {}
    assert final.stop_reason == "tool_use"
    follow = messages + [
        {"role": "assistant", "content": [u.model_dump() for u in uses]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": u.id, "content": f"rows for {u.name}"} for u in uses]},
    ]
    answer = client.messages.create(model="claude-sonnet-4-6", max_tokens=100, messages=follow, tools=tools)
    assert "rows for neo4j__read_neo4j_cypher" in answer.content[0].text
    entries = journal(origin(urls["anthropic"]))
    # The SDK sends the key as `x-api-key` or, in newer releases, as a bearer token.
    assert all(e["headers"].get("x-api-key") == "ak-test"
               or e["headers"].get("authorization") == "Bearer ak-test" for e in entries)
    assert all("anthropic-version" in e["headers"] for e in entries)


# --- MCP ----------------------------------------------------------------------------------------


def test_mcp_sdk_lists_tools_and_calls_with_progress(urls):
    async def run():
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client

        progress = []

        async def on_progress(p, total, message):
            progress.append((p, total, message))

        async with streamable_http_client(urls["argos"]) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = await session.list_tools()
                assert [t.name for t in tools.tools] == ["search_web"]
                assert tools.tools[0].input_schema["required"] == ["query"]
                result = await session.call_tool("search_web", {"query": "pallas"}, progress_callback=on_progress)
                assert result.is_error is False
                assert result.structured_content["results"][0]["title"] == "Pallas Athena"
        return progress

    progress = asyncio.run(run())
    assert [p[0] for p in progress] == [1.0, 2.0, 3.0]
    assert all(p[1] == 3.0 for p in progress)
    sessions = json.loads(__import__("urllib.request").request.urlopen(f"{origin(urls['argos'])}/__mock/sessions", timeout=10).read())
    assert sessions["opened"] >= 1 and sessions["open_now"] == 0


def test_mcp_sdk_echoes_the_bearer_it_sent(urls):
    async def run():
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        async with create_mcp_http_client(headers={"Authorization": "Bearer dev-token", "X-Trace": "interop"}) as http:
            async with streamable_http_client(urls["mnemosyne"], http_client=http) as streams:
                async with ClientSession(streams[0], streams[1]) as session:
                    await session.initialize()
                    result = await session.call_tool("search", {"q": "memories"})
                    return json.loads(result.content[0].text)

    headers = asyncio.run(run())
    assert headers["authorization"] == "Bearer dev-token"
    assert headers["x-trace"] == "interop"
    entries = journal(origin(urls["mnemosyne"]))
    assert entries and all(e["headers"].get("authorization") == "Bearer dev-token" for e in entries)
