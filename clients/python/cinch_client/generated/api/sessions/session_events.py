from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.session_events_response_200 import SessionEventsResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    task: str,
    session: str,
    *,
    last_event_id: int | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = str(last_event_id)

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/tasks/{task}/sessions/{session}/events".format(
            account=quote(str(account), safe=""),
            task=quote(str(task), safe=""),
            session=quote(str(session), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | SessionEventsResponse200 | None:
    if response.status_code == 200:
        response_200 = SessionEventsResponse200.from_dict(response.text)

        return response_200

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | SessionEventsResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | SessionEventsResponse200]:
    """The session's live events: `session.updated`, `message.created`,
    `message.updated`, `tool.progress` and `tool.ended`, each with its number
    as `id`; `Last-Event-ID` resumes after that number, across restarts.

    Args:
        account (str):
        task (str):
        session (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionEventsResponse200]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Problem | SessionEventsResponse200 | None:
    """The session's live events: `session.updated`, `message.created`,
    `message.updated`, `tool.progress` and `tool.ended`, each with its number
    as `id`; `Last-Event-ID` resumes after that number, across restarts.

    Args:
        account (str):
        task (str):
        session (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionEventsResponse200
    """

    return sync_detailed(
        account=account,
        task=task,
        session=session,
        client=client,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | SessionEventsResponse200]:
    """The session's live events: `session.updated`, `message.created`,
    `message.updated`, `tool.progress` and `tool.ended`, each with its number
    as `id`; `Last-Event-ID` resumes after that number, across restarts.

    Args:
        account (str):
        task (str):
        session (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | SessionEventsResponse200]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Problem | SessionEventsResponse200 | None:
    """The session's live events: `session.updated`, `message.created`,
    `message.updated`, `tool.progress` and `tool.ended`, each with its number
    as `id`; `Last-Event-ID` resumes after that number, across restarts.

    Args:
        account (str):
        task (str):
        session (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | SessionEventsResponse200
    """

    return (
        await asyncio_detailed(
            account=account,
            task=task,
            session=session,
            client=client,
            last_event_id=last_event_id,
        )
    ).parsed
