from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.code_task import CodeTask
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    run: str,
    call: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/runs/{run}/tasks/{call}".format(
            run=quote(str(run), safe=""),
            call=quote(str(call), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CodeTask | Problem | None:
    if response.status_code == 200:
        response_200 = CodeTask.from_dict(response.json())

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
) -> Response[CodeTask | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[CodeTask | Problem]:
    """A job's status and, once it has ended, its result.

    Args:
        run (str):
        call (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CodeTask | Problem]
    """

    kwargs = _get_kwargs(
        run=run,
        call=call,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
) -> CodeTask | Problem | None:
    """A job's status and, once it has ended, its result.

    Args:
        run (str):
        call (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CodeTask | Problem
    """

    return sync_detailed(
        run=run,
        call=call,
        client=client,
    ).parsed


async def asyncio_detailed(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[CodeTask | Problem]:
    """A job's status and, once it has ended, its result.

    Args:
        run (str):
        call (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CodeTask | Problem]
    """

    kwargs = _get_kwargs(
        run=run,
        call=call,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
) -> CodeTask | Problem | None:
    """A job's status and, once it has ended, its result.

    Args:
        run (str):
        call (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CodeTask | Problem
    """

    return (
        await asyncio_detailed(
            run=run,
            call=call,
            client=client,
        )
    ).parsed
