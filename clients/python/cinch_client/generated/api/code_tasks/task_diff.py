from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.task_diff_context import TaskDiffContext
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run: str,
    call: str,
    *,
    context: TaskDiffContext | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_context: str | Unset = UNSET
    if not isinstance(context, Unset):
        json_context = context

    params["context"] = json_context

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/api/runs/{run}/tasks/{call}/diff".format(
            run=quote(str(run), safe=""),
            call=quote(str(call), safe=""),
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
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
    context: TaskDiffContext | Unset = UNSET,
) -> Response[Problem | str]:
    """The unified diff of what the task changed: from its start checkpoint to
    its end checkpoint. 409 while it runs.

    Args:
        run (str):
        call (str):
        context (TaskDiffContext | Unset): How much of the unchanged text around a change a diff
            shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        run=run,
        call=call,
        context=context,
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
    context: TaskDiffContext | Unset = UNSET,
) -> Problem | str | None:
    """The unified diff of what the task changed: from its start checkpoint to
    its end checkpoint. 409 while it runs.

    Args:
        run (str):
        call (str):
        context (TaskDiffContext | Unset): How much of the unchanged text around a change a diff
            shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        run=run,
        call=call,
        client=client,
        context=context,
    ).parsed


async def asyncio_detailed(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
    context: TaskDiffContext | Unset = UNSET,
) -> Response[Problem | str]:
    """The unified diff of what the task changed: from its start checkpoint to
    its end checkpoint. 409 while it runs.

    Args:
        run (str):
        call (str):
        context (TaskDiffContext | Unset): How much of the unchanged text around a change a diff
            shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        run=run,
        call=call,
        context=context,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run: str,
    call: str,
    *,
    client: AuthenticatedClient | Client,
    context: TaskDiffContext | Unset = UNSET,
) -> Problem | str | None:
    """The unified diff of what the task changed: from its start checkpoint to
    its end checkpoint. 409 while it runs.

    Args:
        run (str):
        call (str):
        context (TaskDiffContext | Unset): How much of the unchanged text around a change a diff
            shows.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            run=run,
            call=call,
            client=client,
            context=context,
        )
    ).parsed
