"""Waiting for a session to be idle: its turn ended and no message waits for
the next one (a message just sent to an idle session leaves it ``idle`` for a
moment before its turn starts, so the status alone would answer too soon)."""

from __future__ import annotations

import time

from .generated import AuthenticatedClient
from .generated.api.sessions import get_session, list_messages
from .generated.models import EnvelopeSessionData as Session
from .generated.types import UNSET


class WaitTimeoutError(TimeoutError):
    """The session did not become idle in time; ``session`` is how it was last seen."""

    def __init__(self, session: Session, timeout: float):
        self.session = session
        super().__init__(f"session {session.id} is still {session.status} after {timeout} s")


def _newest_message(api: AuthenticatedClient, account: str, task: str, session: str):
    """The session's newest message, queued ones first."""
    page = list_messages.sync(account, task, session, client=api, direction="desc", limit=1)
    return page.data[0] if page and page.data else None


def _turn_coming(newest, session: Session) -> bool:
    """Whether a turn is about to start in a session that reads idle: a
    message waits for it (queued ones have no sequence yet), or was just
    handed to it (a user message with no answer, while no failure to start
    is recorded)."""
    if newest is None:
        return False
    if newest.sequence in (None, UNSET):
        return True
    return newest.type_ == "user" and session.close_reason in (None, UNSET)


def wait_for_idle(
    api: AuthenticatedClient,
    account: str,
    task: str,
    session: str,
    *,
    timeout: float = 30 * 60,
    interval: float = 0.5,
) -> Session:
    """The session once nothing runs in it or waits to: ``idle`` with no
    message queued, or ``closed`` (read its ``close_reason``; a message
    reopens it)."""
    deadline = time.monotonic() + timeout
    while True:
        # The messages before the session: cinch marks a session running
        # before its turn's message exists and idle after the turn's end is
        # in it, so a session read after the messages is never older than
        # them. Read the other way round, a turn starting between the two
        # reads looked like one that had ended: idle, its new message answered.
        newest = _newest_message(api, account, task, session)
        current = get_session.sync(account, task, session, client=api).data
        if current.status == "closed" or (current.status == "idle" and not _turn_coming(newest, current)):
            return current
        if time.monotonic() >= deadline:
            raise WaitTimeoutError(current, timeout)
        time.sleep(interval)
