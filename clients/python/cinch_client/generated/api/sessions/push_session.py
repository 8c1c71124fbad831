from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_pushed import EnvelopePushed
from ...models.problem import Problem
from ...models.push_create import PushCreate
from ...types import Response


def _get_kwargs(
    account: str,
    task: str,
    session: str,
    *,
    body: PushCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/tasks/{task}/sessions/{session}/push".format(
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
) -> EnvelopePushed | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopePushed.from_dict(response.json())

        return response_200

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
) -> Response[EnvelopePushed | Problem]:
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
    body: PushCreate,
) -> Response[EnvelopePushed | Problem]:
    """Pushes the session's branch (its commits; uncommitted changes stay
    behind, as `uncommitted_changes` says) to its environment's repository:
    the local repository, or the remote it was cloned from, with the
    environment's variables and secrets, in the sandbox. Where the remote is
    on a known forge the answer links to a new pull request. 409 while a
    turn runs, or when the repository refuses the push.

    Args:
        account (str):
        task (str):
        session (str):
        body (PushCreate): A push of the session's branch.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopePushed | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        body=body,
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
    body: PushCreate,
) -> EnvelopePushed | Problem | None:
    """Pushes the session's branch (its commits; uncommitted changes stay
    behind, as `uncommitted_changes` says) to its environment's repository:
    the local repository, or the remote it was cloned from, with the
    environment's variables and secrets, in the sandbox. Where the remote is
    on a known forge the answer links to a new pull request. 409 while a
    turn runs, or when the repository refuses the push.

    Args:
        account (str):
        task (str):
        session (str):
        body (PushCreate): A push of the session's branch.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopePushed | Problem
    """

    return sync_detailed(
        account=account,
        task=task,
        session=session,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    body: PushCreate,
) -> Response[EnvelopePushed | Problem]:
    """Pushes the session's branch (its commits; uncommitted changes stay
    behind, as `uncommitted_changes` says) to its environment's repository:
    the local repository, or the remote it was cloned from, with the
    environment's variables and secrets, in the sandbox. Where the remote is
    on a known forge the answer links to a new pull request. 409 while a
    turn runs, or when the repository refuses the push.

    Args:
        account (str):
        task (str):
        session (str):
        body (PushCreate): A push of the session's branch.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopePushed | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        task=task,
        session=session,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    task: str,
    session: str,
    *,
    client: AuthenticatedClient | Client,
    body: PushCreate,
) -> EnvelopePushed | Problem | None:
    """Pushes the session's branch (its commits; uncommitted changes stay
    behind, as `uncommitted_changes` says) to its environment's repository:
    the local repository, or the remote it was cloned from, with the
    environment's variables and secrets, in the sandbox. Where the remote is
    on a known forge the answer links to a new pull request. 409 while a
    turn runs, or when the repository refuses the push.

    Args:
        account (str):
        task (str):
        session (str):
        body (PushCreate): A push of the session's branch.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopePushed | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            task=task,
            session=session,
            client=client,
            body=body,
        )
    ).parsed
