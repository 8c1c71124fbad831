"""The transport every request goes through: it gives each POST an
Idempotency-Key (unless the caller set one) and retries what is safe to
retry, a POST always with its own key, so that a retry never does the work
twice: cinch replays the first answer for the same key and body."""

from __future__ import annotations

import asyncio
import time
import uuid
from dataclasses import dataclass

import httpx

#: The header cinch reads a request's key from.
IDEMPOTENCY_HEADER = "Idempotency-Key"


def new_idempotency_key() -> str:
    """A new key: random, so that two requests never share one by chance."""
    return str(uuid.uuid4())


@dataclass(frozen=True)
class RetryPolicy:
    """When and how often to try a request again."""

    #: Tries after the first one.
    retries: int = 3
    #: The wait before the first retry, doubled for each next one, in seconds.
    base_delay: float = 0.25
    #: The longest wait between two tries, in seconds.
    max_delay: float = 5.0

    def delay(self, attempt: int, response: httpx.Response | None) -> float:
        if response is not None:
            try:
                asked = float(response.headers["retry-after"])
                if asked > 0:
                    return min(asked, self.max_delay)
            except (KeyError, ValueError):
                pass
        return min(self.base_delay * 2**attempt, self.max_delay)


def _retryable(response: httpx.Response) -> bool:
    """Answers worth another try: the server failed (it lets go of the key,
    so the retry runs again), or a request with the same key is still being
    answered (409 with Retry-After). Any other answer was recorded for the
    key and would only be replayed."""
    if response.status_code >= 500:
        return True
    return response.status_code == 409 and "retry-after" in response.headers


def _give_key(request: httpx.Request) -> None:
    if request.method == "POST" and IDEMPOTENCY_HEADER not in request.headers:
        request.headers[IDEMPOTENCY_HEADER] = new_idempotency_key()


class RetryingTransport(httpx.BaseTransport):
    """Wraps a transport: POSTs get a key, and requests are retried on a lost
    connection or a retryable answer with the same key."""

    def __init__(self, inner: httpx.BaseTransport | None = None, policy: RetryPolicy | None = None):
        self._inner = inner or httpx.HTTPTransport()
        self._policy = policy or RetryPolicy()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        _give_key(request)
        # Read whole, so that every try sends the same bytes.
        request.read()
        attempt = 0
        while True:
            last = attempt >= self._policy.retries
            try:
                response = self._inner.handle_request(request)
            except httpx.TransportError:
                if last:
                    raise
                time.sleep(self._policy.delay(attempt, None))
                attempt += 1
                continue
            if last or not _retryable(response):
                return response
            response.close()
            time.sleep(self._policy.delay(attempt, response))
            attempt += 1

    def close(self) -> None:
        self._inner.close()


class AsyncRetryingTransport(httpx.AsyncBaseTransport):
    """:class:`RetryingTransport` for ``httpx.AsyncClient``."""

    def __init__(self, inner: httpx.AsyncBaseTransport | None = None, policy: RetryPolicy | None = None):
        self._inner = inner or httpx.AsyncHTTPTransport()
        self._policy = policy or RetryPolicy()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        _give_key(request)
        await request.aread()
        attempt = 0
        while True:
            last = attempt >= self._policy.retries
            try:
                response = await self._inner.handle_async_request(request)
            except httpx.TransportError:
                if last:
                    raise
                await asyncio.sleep(self._policy.delay(attempt, None))
                attempt += 1
                continue
            if last or not _retryable(response):
                return response
            await response.aclose()
            await asyncio.sleep(self._policy.delay(attempt, response))
            attempt += 1

    async def aclose(self) -> None:
        await self._inner.aclose()
