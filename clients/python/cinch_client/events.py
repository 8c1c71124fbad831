"""Following a live event stream (server-sent events) that outlives its
connections: when one drops or the server restarts, the stream opens again
with ``Last-Event-ID`` set to the last event received, so that no event is
lost and none comes twice."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx

from .errors import ProblemError


@dataclass(frozen=True)
class Event:
    """One event of a session's stream."""

    #: Its number in the session's events, from 1 (-1 for an event without one).
    id: int
    #: ``session.updated``, ``message.created``, ``message.updated``,
    #: ``tool.progress`` or ``tool.ended``.
    event: str
    #: Its data: the session or message as the API shows it, or a turn's
    #: progress lines or end.
    data: Any


@dataclass
class _Fields:
    id: str | None = None
    event: str | None = None
    data: list[str] = field(default_factory=list)


class _Parser:
    """Splits a stream's lines into events."""

    def __init__(self) -> None:
        self.fields = _Fields()
        #: The server's ``retry:`` advice, in seconds.
        self.retry: float | None = None

    def line(self, line: str) -> _Fields | None:
        """Takes one line; the event it completes, if it does."""
        if line == "":
            done, self.fields = self.fields, _Fields()
            return done if done.data else None
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            self.fields.data.append(value)
        elif name == "event":
            self.fields.event = value
        elif name == "id":
            self.fields.id = value
        elif name == "retry" and value.isdigit():
            self.retry = int(value) / 1000
        return None


def _event(fields: _Fields) -> Event:
    text = "\n".join(fields.data)
    try:
        data = json.loads(text)
    except ValueError:
        data = text
    return Event(
        id=int(fields.id) if fields.id and fields.id.isdigit() else -1,
        event=fields.event or "message",
        data=data,
    )


class EventStream:
    """The events of a stream, reopened after every drop until the caller
    stops iterating (or calls :meth:`close`). An error answer (a problem)
    ends it with that error; so do ``max_failures`` failed openings in a row.

    ``last_event_id`` is the id of the last event given, the place a new
    stream would resume from."""

    def __init__(
        self,
        http: httpx.Client,
        url: str,
        *,
        last_event_id: int | None = None,
        reconnect_delay: float = 0.5,
        max_failures: int = 10,
        read_timeout: float = 45.0,
        on_reconnect: Callable[[int | None], None] | None = None,
    ):
        self._http = http
        self._url = url
        self.last_event_id = last_event_id
        self._delay = reconnect_delay
        self._max_failures = max_failures
        # The server sends a comment every 15 s on a quiet stream: a longer
        # silence is a dead connection.
        self._timeout = httpx.Timeout(10.0, read=read_timeout)
        self._on_reconnect = on_reconnect
        self._closed = False

    def close(self) -> None:
        """Stops following after the event being handled."""
        self._closed = True

    def __iter__(self) -> Iterator[Event]:
        failures = 0
        opening = 0
        while not self._closed:
            if opening > 0:
                time.sleep(self._delay)
                if self._on_reconnect:
                    self._on_reconnect(self.last_event_id)
            opening += 1
            headers = {"Accept": "text/event-stream"}
            if self.last_event_id is not None:
                headers["Last-Event-ID"] = str(self.last_event_id)
            parser = _Parser()
            connected = False
            try:
                with self._http.stream("GET", self._url, headers=headers, timeout=self._timeout) as response:
                    if response.status_code != 200:
                        response.read()
                        raise httpx.HTTPStatusError(
                            f"the event stream answered {response.status_code}",
                            request=response.request,
                            response=response,
                        )
                    # A stream that opened counts as a success, however it ends.
                    connected = True
                    failures = 0
                    for line in response.iter_lines():
                        done = parser.line(line)
                        if done is None:
                            continue
                        event = _event(done)
                        if event.id >= 0:
                            self.last_event_id = event.id
                        yield event
                        if self._closed:
                            return
            except ProblemError as error:
                if error.status < 500:
                    raise
                failures += 1
                if failures >= self._max_failures:
                    raise
            except (httpx.TransportError, httpx.HTTPStatusError):
                if not connected:
                    failures += 1
                    if failures >= self._max_failures:
                        raise
            if parser.retry is not None:
                self._delay = parser.retry
