from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_vec_approval import EnvelopeVecApproval
from ...models.list_approvals_status import (
    ListApprovalsStatus,
)
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    *,
    status: ListApprovalsStatus | Unset = UNSET,
    session_id: str | Unset = UNSET,
    task_id: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    json_status: str | Unset = UNSET
    if not isinstance(status, Unset):
        json_status = status

    params["status"] = json_status

    params["session_id"] = session_id

    params["task_id"] = task_id

    params["limit"] = limit

    params["cursor"] = cursor

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/approvals".format(
            account=quote(str(account), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeVecApproval | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopeVecApproval.from_dict(response.json())

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
) -> Response[EnvelopeVecApproval | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    status: ListApprovalsStatus | Unset = UNSET,
    session_id: str | Unset = UNSET,
    task_id: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[EnvelopeVecApproval | Problem]:
    """The account's approvals, newest first.

    Args:
        account (str):
        status (ListApprovalsStatus | Unset): Waiting or not.
        session_id (str | Unset):
        task_id (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeVecApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        status=status,
        session_id=session_id,
        task_id=task_id,
        limit=limit,
        cursor=cursor,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    status: ListApprovalsStatus | Unset = UNSET,
    session_id: str | Unset = UNSET,
    task_id: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> EnvelopeVecApproval | Problem | None:
    """The account's approvals, newest first.

    Args:
        account (str):
        status (ListApprovalsStatus | Unset): Waiting or not.
        session_id (str | Unset):
        task_id (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeVecApproval | Problem
    """

    return sync_detailed(
        account=account,
        client=client,
        status=status,
        session_id=session_id,
        task_id=task_id,
        limit=limit,
        cursor=cursor,
    ).parsed


async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    status: ListApprovalsStatus | Unset = UNSET,
    session_id: str | Unset = UNSET,
    task_id: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> Response[EnvelopeVecApproval | Problem]:
    """The account's approvals, newest first.

    Args:
        account (str):
        status (ListApprovalsStatus | Unset): Waiting or not.
        session_id (str | Unset):
        task_id (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeVecApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        status=status,
        session_id=session_id,
        task_id=task_id,
        limit=limit,
        cursor=cursor,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    status: ListApprovalsStatus | Unset = UNSET,
    session_id: str | Unset = UNSET,
    task_id: str | Unset = UNSET,
    limit: int | Unset = UNSET,
    cursor: str | Unset = UNSET,
) -> EnvelopeVecApproval | Problem | None:
    """The account's approvals, newest first.

    Args:
        account (str):
        status (ListApprovalsStatus | Unset): Waiting or not.
        session_id (str | Unset):
        task_id (str | Unset):
        limit (int | Unset):
        cursor (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeVecApproval | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            client=client,
            status=status,
            session_id=session_id,
            task_id=task_id,
            limit=limit,
            cursor=cursor,
        )
    ).parsed
