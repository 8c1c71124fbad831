"""cinch_client: a typed client for cinch's HTTP API.

``Cinch`` holds the generated client (``cinch_client.generated``: a model per
schema, a module per operation) and adds what a generator does not: an
Idempotency-Key on every POST kept by its retries, problems raised as typed
errors, a session's events followed across dropped connections, and
``wait_for_idle``."""

from .client import Cinch
from .errors import (
    BadRequestError,
    ConflictError,
    FieldError,
    ForbiddenError,
    NotFoundError,
    ProblemError,
    ServerError,
    TooManyRequestsError,
    UnauthorizedError,
    ValidationError,
)
from .events import Event, EventStream
from .retry import (
    IDEMPOTENCY_HEADER,
    AsyncRetryingTransport,
    RetryingTransport,
    RetryPolicy,
    new_idempotency_key,
)
from .wait import WaitTimeoutError, wait_for_idle

__all__ = [
    "IDEMPOTENCY_HEADER",
    "AsyncRetryingTransport",
    "BadRequestError",
    "Cinch",
    "ConflictError",
    "Event",
    "EventStream",
    "FieldError",
    "ForbiddenError",
    "NotFoundError",
    "ProblemError",
    "RetryPolicy",
    "RetryingTransport",
    "ServerError",
    "TooManyRequestsError",
    "UnauthorizedError",
    "ValidationError",
    "WaitTimeoutError",
    "new_idempotency_key",
    "wait_for_idle",
]
