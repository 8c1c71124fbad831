from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.run_events_response_200 import RunEventsResponse200
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run: str,
    *,
    last_event_id: int | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = str(last_event_id)

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/runs/{run}/events".format(
            run=quote(str(run), safe=""),
        ),
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | RunEventsResponse200 | None:
    if response.status_code == 200:
        response_200 = RunEventsResponse200.from_dict(response.text)

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
) -> Response[Problem | RunEventsResponse200]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | RunEventsResponse200]:
    """The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
    `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
    `status`, `session_id`), each with its number as `id`; after a
    reconnect, `Last-Event-ID` resumes after that number.

    Args:
        run (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunEventsResponse200]
    """

    kwargs = _get_kwargs(
        run=run,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Problem | RunEventsResponse200 | None:
    """The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
    `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
    `status`, `session_id`), each with its number as `id`; after a
    reconnect, `Last-Event-ID` resumes after that number.

    Args:
        run (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunEventsResponse200
    """

    return sync_detailed(
        run=run,
        client=client,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | RunEventsResponse200]:
    """The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
    `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
    `status`, `session_id`), each with its number as `id`; after a
    reconnect, `Last-Event-ID` resumes after that number.

    Args:
        run (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | RunEventsResponse200]
    """

    kwargs = _get_kwargs(
        run=run,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    last_event_id: int | Unset = UNSET,
) -> Problem | RunEventsResponse200 | None:
    """The run's live events: `tool.progress` (`run_id`, `tool_call_id`,
    `lines`, `session_id`) and `tool.ended` (`run_id`, `tool_call_id`,
    `status`, `session_id`), each with its number as `id`; after a
    reconnect, `Last-Event-ID` resumes after that number.

    Args:
        run (str):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | RunEventsResponse200
    """

    return (
        await asyncio_detailed(
            run=run,
            client=client,
            last_event_id=last_event_id,
        )
    ).parsed
