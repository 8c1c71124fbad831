from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.compare_diff_context import (
    CompareDiffContext,
)
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    task: str,
    *,
    a: str,
    b: str,
    context: CompareDiffContext | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["a"] = a

    params["b"] = b

    json_context: str | Unset = UNSET
    if not isinstance(context, Unset):
        json_context = context

    params["context"] = json_context

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/tasks/{task}/compare/diff".format(
            account=quote(str(account), safe=""),
            task=quote(str(task), safe=""),
        ),
        "params": params,
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

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

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
    *,
    client: AuthenticatedClient | Client,
    a: str,
    b: str,
    context: CompareDiffContext | Unset = UNSET,
) -> Response[Problem | str]:
    """The unified patch from session `a`'s work tree to session `b`'s (each
    as its latest end checkpoint), as `git diff -M` prints it.

    Args:
        account (str):
        task (str):
        a (str):
        b (str):
        context (CompareDiffContext | Unset): How much of the unchanged text around a change a
            diff shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        a=a,
        b=b,
        context=context,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    task: str,
    *,
    client: AuthenticatedClient | Client,
    a: str,
    b: str,
    context: CompareDiffContext | Unset = UNSET,
) -> Problem | str | None:
    """The unified patch from session `a`'s work tree to session `b`'s (each
    as its latest end checkpoint), as `git diff -M` prints it.

    Args:
        account (str):
        task (str):
        a (str):
        b (str):
        context (CompareDiffContext | Unset): How much of the unchanged text around a change a
            diff shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        account=account,
        task=task,
        client=client,
        a=a,
        b=b,
        context=context,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    *,
    client: AuthenticatedClient | Client,
    a: str,
    b: str,
    context: CompareDiffContext | Unset = UNSET,
) -> Response[Problem | str]:
    """The unified patch from session `a`'s work tree to session `b`'s (each
    as its latest end checkpoint), as `git diff -M` prints it.

    Args:
        account (str):
        task (str):
        a (str):
        b (str):
        context (CompareDiffContext | Unset): How much of the unchanged text around a change a
            diff shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        a=a,
        b=b,
        context=context,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    *,
    client: AuthenticatedClient | Client,
    a: str,
    b: str,
    context: CompareDiffContext | Unset = UNSET,
) -> Problem | str | None:
    """The unified patch from session `a`'s work tree to session `b`'s (each
    as its latest end checkpoint), as `git diff -M` prints it.

    Args:
        account (str):
        task (str):
        a (str):
        b (str):
        context (CompareDiffContext | Unset): How much of the unchanged text around a change a
            diff shows.

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
            client=client,
            a=a,
            b=b,
            context=context,
        )
    ).parsed
