"""The Python SDK against a live ``cinch serve`` whose claude is the fake CLI
(clients/test starts it and names it in CINCH_TEST_*): an environment and a
task made through a relay that loses an answer, the session's events followed
to the turn's end across a cut connection, its messages, an aborted turn,
and problems as typed errors."""

from __future__ import annotations

import asyncio
import json
import os
import time

import pytest
from proxy import Proxy

from cinch_client import Cinch, ConflictError, NotFoundError, RetryPolicy, ValidationError
from cinch_client.generated.api.environments import create_environment, list_environments
from cinch_client.generated.api.sessions import (
    abort_session,
    get_session,
    list_messages,
    list_sessions,
    post_message,
    update_session,
)
from cinch_client.generated.api.tasks import get_task, list_tasks
from cinch_client.generated.models import EnvironmentCreate, MessageCreate, SessionUpdate


def claude_turn(session: str, text: str, tools: int) -> list[dict]:
    """The lines claude prints for a turn that uses ``tools`` tools and answers ``text``."""
    tool_uses = [
        {
            "type": "assistant",
            "session_id": session,
            "message": {
                "content": [
                    {"type": "tool_use", "id": f"t{n}", "name": "Bash", "input": {"command": f"echo {n}"}}
                ]
            },
        }
        for n in range(tools)
    ]
    return [
        {"type": "system", "subtype": "init", "session_id": session, "model": "m"},
        *tool_uses,
        {
            "type": "assistant",
            "session_id": session,
            "message": {"content": [{"type": "text", "text": text}]},
        },
        {"type": "result", "subtype": "success", "is_error": False, "result": text, "session_id": session},
    ]


def next_turn(**fields) -> None:
    """What the fake claude does on its next turn."""
    with open(os.environ["CINCH_TEST_SCRIPT"], "w") as script:
        json.dump(fields, script)


@pytest.fixture
def proxy():
    port = int(os.environ["CINCH_TEST_URL"].rsplit(":", 1)[1])
    relay = Proxy(port)
    yield relay
    relay.close()


@pytest.fixture
def cinch(proxy):
    with Cinch(proxy.url, os.environ["CINCH_TEST_TOKEN"], retry=RetryPolicy(base_delay=0.05)) as client:
        yield client


def test_a_task_followed_across_a_cut_connection_its_messages_and_an_aborted_turn(cinch, proxy):
    api = cinch.api
    account = cinch.account_id()

    # An environment on the test's repository.
    environments_before = list_environments.sync(account, client=api).data
    environment = create_environment.sync(
        account,
        client=api,
        body=EnvironmentCreate(name="sdk-python", repository=os.environ["CINCH_TEST_REPO"]),
    ).data
    environments_after = list_environments.sync(account, client=api).data
    assert len(environments_after) == len(environments_before) + 1
    assert [e.name for e in environments_after if e.id == environment.id] == ["sdk-python"]

    # A task whose answer is lost on the way: the retry carries the same key,
    # so cinch replays the first answer instead of making a second task.
    next_turn(lines=claude_turn("sdk-py", "Done: the flag is in.", 30), line_delay_ms=40)
    tasks_before = list_tasks.sync(account, client=api).data
    keys_before = len(proxy.post_keys)
    proxy.swallow_next_post_answer()
    task, started = cinch.start_task(
        account, title="Add a flag", prompt="Add a --verbose flag.", environment_id=environment.id
    )
    keys = proxy.post_keys[keys_before:]
    assert len(keys) == 2, f"one POST and its retry: {keys}"
    assert len(keys[0]) == 36 and keys[1] == keys[0]
    tasks_after = list_tasks.sync(account, client=api).data
    assert len(tasks_after) == len(tasks_before) + 1
    assert [t.title for t in tasks_after if t.id == task.id] == ["Add a flag"]
    assert [s.id for s in list_sessions.sync(account, task.id, client=api).data] == [started.id]
    session = started.id

    # Its events to the turn's end; the stream is cut once, mid-turn.
    events = []
    resumed_after = []
    cut = 0
    ended = False
    stream = cinch.events(account, task.id, session, reconnect_delay=0.1, on_reconnect=resumed_after.append)
    for event in stream:
        events.append(event)
        if (
            event.event == "tool.progress"
            and cut == 0
            and sum(e.event == "tool.progress" for e in events) == 5
        ):
            cut = proxy.cut_event_streams()
        ended = ended or event.event == "tool.ended"
        if ended and event.event == "session.updated" and event.data["status"] == "idle":
            break
    assert cut == 1, "the stream was cut mid-turn"
    assert len(resumed_after) == 1 and resumed_after[0] > 0
    assert any(e.id > resumed_after[0] for e in events), "events came after the cut"
    assert proxy.event_streams == 2
    # Numbered from 1 with no gap and no repeat, across the cut.
    assert [e.id for e in events] == list(range(1, len(events) + 1))
    # The same events as one uncut reading of the stream.
    whole = []
    for event in cinch.events(account, task.id, session):
        whole.append(event)
        if event.id == events[-1].id:
            break
    assert whole == events
    turn_end = next(e for e in events if e.event == "tool.ended")
    assert turn_end.data["status"] == "completed" and turn_end.data["run_id"] == session
    progress = sum(e.event == "tool.progress" for e in events)
    assert progress >= 30, f"every tool's progress came: {progress}"

    # The conversation: the prompt and the answer.
    messages = list_messages.sync(account, task.id, session, client=api).data
    assert [m.type_ for m in messages] == ["user", "assistant"]
    assert messages[0].content == "Add a --verbose flag."
    assert messages[1].content == "Done: the flag is in."
    assert messages[1].turn["status"] == "completed"

    # A turn that hangs, aborted; wait_for_idle waits past the moment the
    # message is queued and the session still reads idle.
    next_turn(lines=claude_turn("sdk-py", "never said", 0)[:1], hang_ms=60_000)
    post_message.sync(account, task.id, session, client=api, body=MessageCreate(message="Now the tests."))
    deadline = time.monotonic() + 10
    while get_session.sync(account, task.id, session, client=api).data.status != "running":
        assert time.monotonic() < deadline, "the turn did not start"
        time.sleep(0.05)
    aborted = abort_session.sync_detailed(account, task.id, session, client=api)
    assert aborted.status_code == 202
    idle = cinch.wait_for_idle(account, task.id, session, timeout=30, interval=0.1)
    assert idle.status == "idle"
    after_abort = list_messages.sync(account, task.id, session, client=api).data
    assert [m.type_ for m in after_abort] == ["user", "assistant", "user", "assistant"]
    assert after_abort[3].turn["status"] == "cancelled"

    # wait_for_idle does not answer while a message sent to the idle session
    # still waits for its turn.
    next_turn(lines=claude_turn("sdk-py", "Tests added.", 3), line_delay_ms=100)
    post_message.sync(
        account, task.id, session, client=api, body=MessageCreate(message="Add the tests again.")
    )
    cinch.wait_for_idle(account, task.id, session, timeout=30, interval=0.02)
    last = list_messages.sync(account, task.id, session, client=api).data[-1]
    assert last.content == "Tests added."
    assert last.turn["status"] == "completed"

    # A closed session is as idle as it gets: wait_for_idle answers with it.
    update_session.sync(account, task.id, session, client=api, body=SessionUpdate(status="closed"))
    closed = cinch.wait_for_idle(account, task.id, session, timeout=5, interval=0.05)
    assert closed.status == "closed"
    assert get_session.sync(account, task.id, session, client=api).data.status == "closed"

    # Problems are typed errors.
    with pytest.raises(ConflictError) as conflict:
        abort_session.sync(account, task.id, session, client=api)
    assert conflict.value.status == 409
    with pytest.raises(NotFoundError) as missing:
        get_task.sync(account, "task_0000000000000000000000000000", client=api)
    assert missing.value.code == "not_found"
    with pytest.raises(ValidationError) as invalid:
        # Deliberately wrong: the repository must be a string.
        create_environment.sync(account, client=api, body=EnvironmentCreate(name="broken", repository=42))
    assert "repository" in [error.field for error in invalid.value.errors]


def test_async_calls_keep_their_key_across_a_retry_and_raise_problems(cinch, proxy):
    api = cinch.api
    account = cinch.account_id()
    before = list_environments.sync(account, client=api).data

    async def calls():
        keys_before = len(proxy.post_keys)
        proxy.swallow_next_post_answer()
        created = await create_environment.asyncio(
            account,
            client=api,
            body=EnvironmentCreate(name="sdk-python-async", repository=os.environ["CINCH_TEST_REPO"]),
        )
        keys = proxy.post_keys[keys_before:]
        assert len(keys) == 2 and keys[1] == keys[0], f"one POST and its retry: {keys}"
        with pytest.raises(NotFoundError):
            await get_task.asyncio(account, "task_0000000000000000000000000000", client=api)
        await api.get_async_httpx_client().aclose()
        return created.data

    environment = asyncio.run(calls())
    after = list_environments.sync(account, client=api).data
    assert len(after) == len(before) + 1
    assert [e.name for e in after if e.id == environment.id] == ["sdk-python-async"]
