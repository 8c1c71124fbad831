from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_vec_message import EnvelopeVecMessage
from ...models.list_messages_direction import (
    ListMessagesDirection,
)
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    task: str,
    session: str,
    *,
    direction: ListMessagesDirection | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_direction: str | Unset = UNSET
    if not isinstance(direction, Unset):
        json_direction = direction

    params["direction"] = json_direction

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/tasks/{task}/sessions/{session}/messages".format(
            account=quote(str(account), safe=""),
            task=quote(str(task), safe=""),
            session=quote(str(session), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeVecMessage | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopeVecMessage.from_dict(response.json())

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
) -> Response[EnvelopeVecMessage | Problem]:
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
    direction: ListMessagesDirection | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[EnvelopeVecMessage | Problem]:
    """The session's messages, oldest first (or newest first with
    `direction=desc`); queued ones have `sequence: null`.

    Args:
        account (str):
        task (str):
        session (str):
        direction (ListMessagesDirection | Unset): The order of a page of messages.
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeVecMessage | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        direction=direction,
        limit=limit,
        cursor=cursor,
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
    direction: ListMessagesDirection | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> EnvelopeVecMessage | Problem | None:
    """The session's messages, oldest first (or newest first with
    `direction=desc`); queued ones have `sequence: null`.

    Args:
        account (str):
        task (str):
        session (str):
        direction (ListMessagesDirection | Unset): The order of a page of messages.
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeVecMessage | Problem
    """

    return sync_detailed(
        account=account,
        task=task,
        session=session,
        client=client,
        direction=direction,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    direction: ListMessagesDirection | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[EnvelopeVecMessage | Problem]:
    """The session's messages, oldest first (or newest first with
    `direction=desc`); queued ones have `sequence: null`.

    Args:
        account (str):
        task (str):
        session (str):
        direction (ListMessagesDirection | Unset): The order of a page of messages.
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeVecMessage | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        direction=direction,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    direction: ListMessagesDirection | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> EnvelopeVecMessage | Problem | None:
    """The session's messages, oldest first (or newest first with
    `direction=desc`); queued ones have `sequence: null`.

    Args:
        account (str):
        task (str):
        session (str):
        direction (ListMessagesDirection | Unset): The order of a page of messages.
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeVecMessage | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            task=task,
            session=session,
            client=client,
            direction=direction,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
