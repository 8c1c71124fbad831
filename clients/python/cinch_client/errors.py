"""cinch's error answers (application/problem+json, RFC 9457) as exceptions
to catch by class: every request whose answer is a problem raises one."""

from __future__ import annotations

from dataclasses import dataclass

import httpx


@dataclass(frozen=True)
class FieldError:
    """A field at fault in a 422, as the problem names it."""

    field: str
    message: str


class ProblemError(Exception):
    """Any error answer of cinch."""

    def __init__(self, problem: dict, retry_after: float | None = None):
        self.status: int = int(problem.get("status", 0))
        #: The problem's type, ``urn:cinch:<code>``.
        self.type: str = str(problem.get("type", ""))
        #: The type's last part: ``not_found``, ``validation``, ``worktree.busy``, ...
        self.code: str = self.type.removeprefix("urn:cinch:")
        self.title: str = str(problem.get("title", ""))
        #: What went wrong this time.
        self.detail: str = str(problem.get("detail", ""))
        #: The fields at fault, when the request's content is.
        self.errors: list[FieldError] = [
            FieldError(str(error.get("field", "")), str(error.get("message", "")))
            for error in problem.get("errors") or []
        ]
        #: Seconds the server asks to wait before trying again, when it says.
        self.retry_after = retry_after
        super().__init__(f"{self.status} {self.title}: {self.detail}")


class BadRequestError(ProblemError):
    """400: the body is not JSON."""


class UnauthorizedError(ProblemError):
    """401: no token, or one cinch does not know."""


class ForbiddenError(ProblemError):
    """403: the token may not do this."""


class NotFoundError(ProblemError):
    """404: nothing there for this token (another account's object included)."""


class ConflictError(ProblemError):
    """409: the object's state does not allow the request (a turn still runs, a key in flight)."""


class ValidationError(ProblemError):
    """422: a field, parameter or key breaks its rule; ``errors`` names them."""


class TooManyRequestsError(ProblemError):
    """429: no capacity for it now."""


class ServerError(ProblemError):
    """5xx: the server failed."""


_BY_STATUS: dict[int, type[ProblemError]] = {
    400: BadRequestError,
    401: UnauthorizedError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: TooManyRequestsError,
}


def problem_error(problem: dict, retry_after: float | None = None) -> ProblemError:
    """The exception for a problem, of the class its status calls for."""
    status = int(problem.get("status", 0))
    kind = ServerError if status >= 500 else _BY_STATUS.get(status, ProblemError)
    return kind(problem, retry_after)


def is_problem(response: httpx.Response) -> bool:
    """Whether an answer is a problem."""
    return response.headers.get("content-type", "").startswith("application/problem+json")


def _raise(response: httpx.Response) -> None:
    try:
        retry_after: float | None = float(response.headers["retry-after"])
    except (KeyError, ValueError):
        retry_after = None
    raise problem_error(response.json(), retry_after)


def raise_for_problem(response: httpx.Response) -> None:
    """Raises the problem of an answer that is one (an httpx response hook)."""
    if is_problem(response):
        response.read()
        _raise(response)


async def araise_for_problem(response: httpx.Response) -> None:
    """:func:`raise_for_problem` for ``httpx.AsyncClient``."""
    if is_problem(response):
        await response.aread()
        _raise(response)
