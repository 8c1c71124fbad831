from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    account: str,
    task: str,
    session: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/tasks/{task}/sessions/{session}/setup-log".format(
            account=quote(str(account), safe=""),
            task=quote(str(task), safe=""),
            session=quote(str(session), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
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
) -> Response[Problem | str]:
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
) -> Response[Problem | str]:
    """The whole output of the session's setup commands at its last boot, each
    after a `$ <command>` line, secrets masked; 404 when it ran none here.

    Args:
        account (str):
        task (str):
        session (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
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
) -> Problem | str | None:
    """The whole output of the session's setup commands at its last boot, each
    after a `$ <command>` line, secrets masked; 404 when it ran none here.

    Args:
        account (str):
        task (str):
        session (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        account=account,
        task=task,
        session=session,
        client=client,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[Problem | str]:
    """The whole output of the session's setup commands at its last boot, each
    after a `$ <command>` line, secrets masked; 404 when it ran none here.

    Args:
        account (str):
        task (str):
        session (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
) -> Problem | str | None:
    """The whole output of the session's setup commands at its last boot, each
    after a `$ <command>` line, secrets masked; 404 when it ran none here.

    Args:
        account (str):
        task (str):
        session (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            account=account,
            task=task,
            session=session,
            client=client,
        )
    ).parsed
