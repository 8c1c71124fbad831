"""The client: every operation of cinch's API, generated from its OpenAPI
document (``api``, for ``cinch_client.generated.api``), with keys and
retries on every request, problems raised as errors, and the helpers for
following a session."""

from __future__ import annotations

from typing import Self
from urllib.parse import quote

import httpx

from .errors import araise_for_problem, raise_for_problem
from .events import EventStream
from .generated import AuthenticatedClient
from .generated.api.accounts import list_accounts
from .generated.api.sessions import list_sessions
from .generated.api.tasks import create_task
from .generated.models import EnvelopeSessionData as Session
from .generated.models import EnvelopeTaskViewData as Task
from .generated.models import EnvelopeVecSessionDataItem as SessionItem
from .generated.models import TaskCreate
from .retry import AsyncRetryingTransport, RetryingTransport, RetryPolicy
from .wait import wait_for_idle


class Cinch:
    """A cinch server, as one token sees it.

    ``api`` is the generated client every operation takes, sync or async::

        from cinch_client.generated.api.tasks import list_tasks
        tasks = list_tasks.sync(account, client=cinch.api).data
        tasks = (await list_tasks.asyncio(account, client=cinch.api)).data
    """

    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        retry: RetryPolicy | None = None,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
        async_transport: httpx.AsyncBaseTransport | None = None,
    ):
        base_url = base_url.rstrip("/")
        self.api = AuthenticatedClient(
            base_url=base_url, token=token, timeout=httpx.Timeout(timeout), raise_on_unexpected_status=True
        )
        # Built here rather than by the generated client, which would give
        # the async one the sync transport and hook.
        shared = {
            "base_url": base_url,
            "headers": {"Authorization": f"Bearer {token}"},
            "timeout": httpx.Timeout(timeout),
        }
        self.api.set_httpx_client(
            httpx.Client(
                transport=RetryingTransport(transport, retry),
                event_hooks={"response": [raise_for_problem]},
                **shared,
            )
        )
        self.api.set_async_httpx_client(
            httpx.AsyncClient(
                transport=AsyncRetryingTransport(async_transport, retry),
                event_hooks={"response": [araise_for_problem]},
                **shared,
            )
        )

    def close(self) -> None:
        """Closes the sync connections (``await cinch.api.get_async_httpx_client().aclose()``
        closes the async ones)."""
        self.api.get_httpx_client().close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def account_id(self) -> str:
        """The id of the token's account."""
        accounts = list_accounts.sync(client=self.api).data
        if not accounts:
            raise LookupError("the token sees no account")
        return accounts[0].id

    def start_task(self, account: str, **fields) -> tuple[Task, SessionItem | None]:
        """Creates a task (``TaskCreate``'s fields); with a ``prompt`` it
        starts a session, returned with it (``None`` without one)."""
        task = create_task.sync(account, client=self.api, body=TaskCreate.from_dict(fields)).data
        sessions = list_sessions.sync(account, task.id, client=self.api).data
        return task, sessions[0] if sessions else None

    def events(self, account: str, task: str, session: str, **options) -> EventStream:
        """A session's live events, from its first (or after
        ``last_event_id=``), followed across dropped connections until the
        loop stops; see :class:`EventStream` for the options."""
        account, task, session = (quote(part, safe="") for part in (account, task, session))
        url = f"/v1/accounts/{account}/tasks/{task}/sessions/{session}/events"
        return EventStream(self.api.get_httpx_client(), url, **options)

    def wait_for_idle(
        self, account: str, task: str, session: str, *, timeout: float = 30 * 60, interval: float = 0.5
    ) -> Session:
        """The session once its turn ended and nothing waits (or once it closed)."""
        return wait_for_idle(self.api, account, task, session, timeout=timeout, interval=interval)
