from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_session import EnvelopeSession
from ...models.fork_create import ForkCreate
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    task: str,
    session: str,
    *,
    body: ForkCreate,
    idempotency_key: str | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(idempotency_key, Unset):
        headers["Idempotency-Key"] = idempotency_key

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/tasks/{task}/sessions/{session}/fork".format(
            account=quote(str(account), safe=""),
            task=quote(str(task), safe=""),
            session=quote(str(session), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeSession | Problem | None:
    if response.status_code == 201:
        response_201 = EnvelopeSession.from_dict(response.json())

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

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[EnvelopeSession | Problem]:
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
    body: ForkCreate,
    idempotency_key: str | Unset = UNSET,
) -> Response[EnvelopeSession | Problem]:
    """Forks the session at a turn: a new session of the same task whose work
    tree (a new worktree and branch) starts from that turn's end checkpoint
    and whose conversation holds the messages up to that turn, each marked
    `forked_from`. The source is untouched. `fork_mode` says how the harness
    session begins (`brief`: a new one, given the conversation).

    Args:
        account (str):
        task (str):
        session (str):
        idempotency_key (str | Unset):
        body (ForkCreate): A fork to make; every field is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeSession | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        body=body,
        idempotency_key=idempotency_key,
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
    body: ForkCreate,
    idempotency_key: str | Unset = UNSET,
) -> EnvelopeSession | Problem | None:
    """Forks the session at a turn: a new session of the same task whose work
    tree (a new worktree and branch) starts from that turn's end checkpoint
    and whose conversation holds the messages up to that turn, each marked
    `forked_from`. The source is untouched. `fork_mode` says how the harness
    session begins (`brief`: a new one, given the conversation).

    Args:
        account (str):
        task (str):
        session (str):
        idempotency_key (str | Unset):
        body (ForkCreate): A fork to make; every field is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeSession | Problem
    """

    return sync_detailed(
        account=account,
        task=task,
        session=session,
        client=client,
        body=body,
        idempotency_key=idempotency_key,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    body: ForkCreate,
    idempotency_key: str | Unset = UNSET,
) -> Response[EnvelopeSession | Problem]:
    """Forks the session at a turn: a new session of the same task whose work
    tree (a new worktree and branch) starts from that turn's end checkpoint
    and whose conversation holds the messages up to that turn, each marked
    `forked_from`. The source is untouched. `fork_mode` says how the harness
    session begins (`brief`: a new one, given the conversation).

    Args:
        account (str):
        task (str):
        session (str):
        idempotency_key (str | Unset):
        body (ForkCreate): A fork to make; every field is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeSession | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        body=body,
        idempotency_key=idempotency_key,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    body: ForkCreate,
    idempotency_key: str | Unset = UNSET,
) -> EnvelopeSession | Problem | None:
    """Forks the session at a turn: a new session of the same task whose work
    tree (a new worktree and branch) starts from that turn's end checkpoint
    and whose conversation holds the messages up to that turn, each marked
    `forked_from`. The source is untouched. `fork_mode` says how the harness
    session begins (`brief`: a new one, given the conversation).

    Args:
        account (str):
        task (str):
        session (str):
        idempotency_key (str | Unset):
        body (ForkCreate): A fork to make; every field is optional.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeSession | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            task=task,
            session=session,
            client=client,
            body=body,
            idempotency_key=idempotency_key,
        )
    ).parsed
