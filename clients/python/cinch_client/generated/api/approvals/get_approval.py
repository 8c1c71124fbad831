from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_approval import EnvelopeApproval
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    account: str,
    approval: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/approvals/{approval}".format(
            account=quote(str(account), safe=""),
            approval=quote(str(approval), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeApproval | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopeApproval.from_dict(response.json())

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
) -> Response[EnvelopeApproval | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[EnvelopeApproval | Problem]:
    """One approval.

    Args:
        account (str):
        approval (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        approval=approval,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
) -> EnvelopeApproval | Problem | None:
    """One approval.

    Args:
        account (str):
        approval (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeApproval | Problem
    """

    return sync_detailed(
        account=account,
        approval=approval,
        client=client,
    ).parsed


async def asyncio_detailed(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[EnvelopeApproval | Problem]:
    """One approval.

    Args:
        account (str):
        approval (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        approval=approval,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
) -> EnvelopeApproval | Problem | None:
    """One approval.

    Args:
        account (str):
        approval (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeApproval | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            approval=approval,
            client=client,
        )
    ).parsed
