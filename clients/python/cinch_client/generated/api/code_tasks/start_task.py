from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.code_task import CodeTask
from ...models.problem import Problem
from ...models.task_request import TaskRequest
from ...types import UNSET, Response, Unset


def _get_kwargs(
    run: str,
    *,
    body: TaskRequest,
    wait: bool | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    params: dict[str, Any] = {}

    params["wait"] = wait

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/api/runs/{run}/tasks".format(
            run=quote(str(run), safe=""),
        ),
        "params": params,
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> CodeTask | Problem | None:
    if response.status_code == 201:
        response_201 = CodeTask.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())

        return response_408

    if response.status_code == 409:
        response_409 = Problem.from_dict(response.json())

        return response_409

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

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
    *,
    client: AuthenticatedClient | Client,
    body: TaskRequest,
    wait: bool | Unset = UNSET,
) -> Response[CodeTask | Problem]:
    """Starts a job: one turn of `harness` in the environment's repository.
    With `?wait=true` the answer comes once the turn has ended, with its result.

    Args:
        run (str):
        wait (bool | Unset):
        body (TaskRequest): A job to start: one turn, without a task or session.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CodeTask | Problem]
    """

    kwargs = _get_kwargs(
        run=run,
        body=body,
        wait=wait,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    body: TaskRequest,
    wait: bool | Unset = UNSET,
) -> CodeTask | Problem | None:
    """Starts a job: one turn of `harness` in the environment's repository.
    With `?wait=true` the answer comes once the turn has ended, with its result.

    Args:
        run (str):
        wait (bool | Unset):
        body (TaskRequest): A job to start: one turn, without a task or session.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CodeTask | Problem
    """

    return sync_detailed(
        run=run,
        client=client,
        body=body,
        wait=wait,
    ).parsed


async def asyncio_detailed(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    body: TaskRequest,
    wait: bool | Unset = UNSET,
) -> Response[CodeTask | Problem]:
    """Starts a job: one turn of `harness` in the environment's repository.
    With `?wait=true` the answer comes once the turn has ended, with its result.

    Args:
        run (str):
        wait (bool | Unset):
        body (TaskRequest): A job to start: one turn, without a task or session.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[CodeTask | Problem]
    """

    kwargs = _get_kwargs(
        run=run,
        body=body,
        wait=wait,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    run: str,
    *,
    client: AuthenticatedClient | Client,
    body: TaskRequest,
    wait: bool | Unset = UNSET,
) -> CodeTask | Problem | None:
    """Starts a job: one turn of `harness` in the environment's repository.
    With `?wait=true` the answer comes once the turn has ended, with its result.

    Args:
        run (str):
        wait (bool | Unset):
        body (TaskRequest): A job to start: one turn, without a task or session.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        CodeTask | Problem
    """

    return (
        await asyncio_detailed(
            run=run,
            client=client,
            body=body,
            wait=wait,
        )
    ).parsed
