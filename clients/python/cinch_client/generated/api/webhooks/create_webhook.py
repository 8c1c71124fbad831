from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_webhook_view import EnvelopeWebhookView
from ...models.problem import Problem
from ...models.webhook_create import WebhookCreate
from ...types import Response


def _get_kwargs(
    account: str,
    *,
    body: WebhookCreate,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/webhooks".format(
            account=quote(str(account), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeWebhookView | Problem | None:
    if response.status_code == 201:
        response_201 = EnvelopeWebhookView.from_dict(response.json())

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
) -> Response[EnvelopeWebhookView | Problem]:
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
    body: WebhookCreate,
) -> Response[EnvelopeWebhookView | Problem]:
    """Registers a webhook: the account's events are POSTed to it from now on.

    Args:
        account (str):
        body (WebhookCreate): A new webhook.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeWebhookView | Problem]
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
    body: WebhookCreate,
) -> EnvelopeWebhookView | Problem | None:
    """Registers a webhook: the account's events are POSTed to it from now on.

    Args:
        account (str):
        body (WebhookCreate): A new webhook.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeWebhookView | Problem
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
    body: WebhookCreate,
) -> Response[EnvelopeWebhookView | Problem]:
    """Registers a webhook: the account's events are POSTed to it from now on.

    Args:
        account (str):
        body (WebhookCreate): A new webhook.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeWebhookView | Problem]
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
    body: WebhookCreate,
) -> EnvelopeWebhookView | Problem | None:
    """Registers a webhook: the account's events are POSTed to it from now on.

    Args:
        account (str):
        body (WebhookCreate): A new webhook.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeWebhookView | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            client=client,
            body=body,
        )
    ).parsed
