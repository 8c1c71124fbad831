"""cinch's MCP endpoint, driven by the official MCP Python SDK over
Streamable HTTP: what an agent in an editor does with it, step by step,
reading state before and after each change. Run by tests/mcp-client/run
against a live `cinch serve` whose `claude` is the fake CLI; the tokens come
in CINCH_TOKEN (the admin's) and CINCH_OTHER_TOKEN (another account's)."""

import argparse
import asyncio
import json
import os
import sys
import urllib.error
import urllib.request

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

TOOLS = {"list_environments", "start_task", "wait_for_task", "get_result", "send_message", "abort_task"}


def claude_turn(session, text):
    """The stream-json lines of a claude turn that says `text`."""
    return [
        {"type": "system", "subtype": "init", "session_id": session, "model": "m"},
        {"type": "assistant", "session_id": session, "message": {"content": [{"type": "text", "text": text}]}},
        {"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": session},
    ]


def write_script(path, **script):
    """What the fake CLI does on its next run."""
    with open(path, "w") as file:
        json.dump(script, file)


def rest(base, token, method, path, body=None):
    """A call to cinch's HTTP API: its status and JSON answer."""
    request = urllib.request.Request(
        base + path, method=method, data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": "Bearer " + token, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as error:
        return error.code, json.load(error)


def connect(base, token):
    """An MCP client of `base`/mcp that sends `token` (none: no header)."""
    headers = {"Authorization": "Bearer " + token} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
    return Client(streamable_http_client(base + "/mcp", http_client=http))


async def call(client, tool, **arguments):
    """A tool's answer, which must not be an error."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool}({arguments}) failed: {result.content}"
    assert result.structured_content is not None, result
    # The text content is the same JSON, for clients that read text only.
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


async def refused(client, tool, **arguments):
    """The text of a tool error, which the call must end in."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool}({arguments}) should fail: {result.structured_content}"
    return result.content[0].text


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--repo", required=True)
    parser.add_argument("--script", required=True)
    args = parser.parse_args()
    base, script = args.base, args.script
    token, other_token = os.environ["CINCH_TOKEN"], os.environ["CINCH_OTHER_TOKEN"]

    status, accounts = rest(base, token, "GET", "/v1/accounts")
    account = accounts["data"][0]["id"]
    status, created = rest(base, token, "POST", f"/v1/accounts/{account}/environments",
                           {"name": "shop", "repository": args.repo})
    check(status == 201, created)
    environment_id = created["data"]["id"]

    async with connect(base, token) as client:
        tools = (await client.list_tools()).tools
        check({tool.name for tool in tools} == TOOLS, [tool.name for tool in tools])
        for tool in tools:
            check(tool.description and tool.input_schema["type"] == "object", tool)

        listed = await call(client, "list_environments")
        check([(e["id"], e["name"]) for e in listed["environments"]] == [(environment_id, "shop")], listed)
        check(listed["next_cursor"] is None, listed)

        # A task, by the environment's name, on the fake claude.
        write_script(script, lines=claude_turn("sess-1", "Wrote out.txt."), line_delay_ms=50,
                     write_files={"out.txt": "hello from the agent\n"})
        started = await call(client, "start_task", prompt="Write out.txt.", environment="shop",
                             harness="claude")
        task_id, session_id = started["task_id"], started["session_id"]
        check(started["harness"] == "claude", started)
        status, sessions = rest(base, token, "GET", f"/v1/accounts/{account}/tasks/{task_id}/sessions")
        check([s["id"] for s in sessions["data"]] == [session_id], sessions)
        check(sessions["data"][0]["environment_id"] == environment_id, sessions)

        waited = await call(client, "wait_for_task", task_id=task_id, timeout_seconds=120)
        check(waited["done"] and waited["status"] == "idle", waited)
        result = await call(client, "get_result", task_id=task_id)
        check(result["session_id"] == session_id, result)
        check(result["turn"]["status"] == "completed", result)
        check(result["turn"]["final_message"] == "Wrote out.txt.", result)
        check(result["turn"]["result"]["files_changed"][0]["path"] == "out.txt", result)
        check("+++ b/out.txt" in result["diff"]["text"]
              and "+hello from the agent" in result["diff"]["text"], result)
        check(not result["diff"]["truncated"], result)
        first_call = result["turn"]["call_id"]

        # A follow-up runs as the session's next turn, resuming its harness session.
        write_script(script, lines=claude_turn("sess-1", "Added a test."),
                     write_files={"test.txt": "a test\n"})
        sent = await call(client, "send_message", task_id=task_id, message="Add a test.")
        check(sent["session_id"] == session_id and sent["message_id"], sent)
        waited = await call(client, "wait_for_task", task_id=task_id, session_id=session_id,
                            timeout_seconds=120)
        check(waited["done"], waited)
        result = await call(client, "get_result", task_id=task_id, session_id=session_id)
        check(result["turn"]["call_id"] != first_call, result)
        check(result["turn"]["final_message"] == "Added a test.", result)
        check("+++ b/test.txt" in result["diff"]["text"]
              and "out.txt" not in result["diff"]["text"], result)
        status, messages = rest(base, token, "GET",
                                f"/v1/accounts/{account}/tasks/{task_id}/sessions/{session_id}/messages")
        users = [m["content"] for m in messages["data"] if m["type"] == "user"]
        check(users == ["Write out.txt.", "Add a test."], users)

        # Abort: a turn that hangs is cancelled; the session stays open.
        check("nothing to abort" in await refused(client, "abort_task", task_id=task_id),
              "an idle session has nothing to abort")
        write_script(script, lines=claude_turn("sess-1", "Working...")[:2], hang_ms=120000)
        await call(client, "send_message", task_id=task_id, message="Take your time.")
        waited = await call(client, "wait_for_task", task_id=task_id, timeout_seconds=2)
        check(not waited["done"] and waited["status"] in ("running", "booting", "waiting", "idle"), waited)
        second_call = result["turn"]["call_id"]
        for _ in range(300):
            result = await call(client, "get_result", task_id=task_id)
            if result["turn"]["call_id"] not in (first_call, second_call):
                break
            await asyncio.sleep(0.1)
        check(result["turn"]["status"] == "running" and result["diff"] is None
              and "still running" in result["diff_unavailable"], result)
        aborted = await call(client, "abort_task", task_id=task_id)
        check(aborted["session_id"] == session_id, aborted)
        waited = await call(client, "wait_for_task", task_id=task_id, timeout_seconds=60)
        check(waited["done"] and waited["status"] == "idle", waited)
        result = await call(client, "get_result", task_id=task_id)
        check(result["turn"]["status"] == "cancelled", result)

        # Refusals are tool errors that say what was wrong.
        text = await refused(client, "start_task", prompt="x", harness="no-such-cli")
        check("no harness is named no-such-cli" in text and "claude" in text, text)
        text = await refused(client, "start_task", prompt="   ")
        check("prompt" in text and "blank" in text, text)
        text = await refused(client, "start_task", prompt="x", environment="nowhere")
        check("nowhere" in text and "list_environments" in text, text)
        text = await refused(client, "wait_for_task", task_id=task_id, timeout_seconds=0)
        check("timeout_seconds" in text, text)
        text = await refused(client, "get_result", task_id="task_nope")
        check(text.startswith("not_found:"), text)
        status, tasks = rest(base, token, "GET", f"/v1/accounts/{account}/tasks")
        check(len(tasks["data"]) == 1, "refused starts made no task")

    # Another account's token: none of this account's environments or tasks.
    status, before = rest(base, token, "GET",
                          f"/v1/accounts/{account}/tasks/{task_id}/sessions/{session_id}/messages")
    async with connect(base, other_token) as other:
        listed = await call(other, "list_environments")
        check(listed["environments"] == [], listed)
        for tool, arguments in [
            ("get_result", {}), ("wait_for_task", {"timeout_seconds": 1}),
            ("send_message", {"message": "hijack"}), ("abort_task", {}),
        ]:
            text = await refused(other, tool, task_id=task_id, **arguments)
            check(text == "not_found: no such task", f"{tool}: {text}")
            text = await refused(other, tool, task_id=task_id, session_id=session_id, **arguments)
            check(text == "not_found: no such session", f"{tool}: {text}")
        text = await refused(other, "start_task", prompt="x", environment=environment_id)
        check("none of your account's environments" in text, text)
    status, after = rest(base, token, "GET",
                         f"/v1/accounts/{account}/tasks/{task_id}/sessions/{session_id}/messages")
    check(after["data"] == before["data"], "the other account changed nothing")

    # No token, or a wrong one: 401 before any MCP, saying what to send.
    async with httpx2.AsyncClient(timeout=30) as http:
        initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}}
        accept = {"Accept": "application/json, text/event-stream"}
        for headers in [accept, {**accept, "Authorization": "Bearer not-a-token"}]:
            response = await http.post(base + "/mcp", json=initialize, headers=headers)
            check(response.status_code == 401, (response.status_code, response.text))
            check(response.headers["www-authenticate"] == "Bearer", response.headers)
            check(response.headers["content-type"] == "application/problem+json", response.headers)
            check("Bearer" in response.json()["detail"] or "not valid" in response.json()["detail"],
                  response.text)
        response = await http.get(base + "/mcp", headers={"Authorization": "Bearer " + token})
        check(response.status_code == 405, (response.status_code, response.text))
    try:
        async with connect(base, None) as client:
            await client.list_tools()
        raise AssertionError("a client without a token got in")
    except Exception as error:  # the SDK reports the 401 its own way
        if isinstance(error, AssertionError):
            raise
    print("mcp-client: 1 passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main())
