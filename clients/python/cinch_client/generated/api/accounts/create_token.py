from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_new_token import EnvelopeNewToken
from ...models.problem import Problem
from ...models.token_create import TokenCreate
from ...types import Response


def _get_kwargs(
    account: str,
    *,
    body: TokenCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/tokens".format(
            account=quote(str(account), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeNewToken | Problem | None:
    if response.status_code == 201:
        response_201 = EnvelopeNewToken.from_dict(response.json())

        return response_201

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())

        return response_408

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
) -> Response[EnvelopeNewToken | Problem]:
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
    body: TokenCreate,
) -> Response[EnvelopeNewToken | Problem]:
    """Makes a token for the caller or for one of the account's agents.

    Args:
        account (str):
        body (TokenCreate): Whom a new token is for.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeNewToken | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenCreate,
) -> EnvelopeNewToken | Problem | None:
    """Makes a token for the caller or for one of the account's agents.

    Args:
        account (str):
        body (TokenCreate): Whom a new token is for.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeNewToken | Problem
    """

    return sync_detailed(
        account=account,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenCreate,
) -> Response[EnvelopeNewToken | Problem]:
    """Makes a token for the caller or for one of the account's agents.

    Args:
        account (str):
        body (TokenCreate): Whom a new token is for.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeNewToken | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    body: TokenCreate,
) -> EnvelopeNewToken | Problem | None:
    """Makes a token for the caller or for one of the account's agents.

    Args:
        account (str):
        body (TokenCreate): Whom a new token is for.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeNewToken | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            client=client,
            body=body,
        )
    ).parsed
