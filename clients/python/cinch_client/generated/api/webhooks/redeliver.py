from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_delivery_view import EnvelopeDeliveryView
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    account: str,
    webhook: str,
    delivery: str,
) -> dict[str, Any]:

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/webhooks/{webhook}/deliveries/{delivery}/redeliver".format(
            account=quote(str(account), safe=""),
            webhook=quote(str(webhook), safe=""),
            delivery=quote(str(delivery), safe=""),
        ),
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeDeliveryView | Problem | None:
    if response.status_code == 202:
        response_202 = EnvelopeDeliveryView.from_dict(response.json())

        return response_202

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

    if response.status_code == 403:
        response_403 = Problem.from_dict(response.json())

        return response_403

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
) -> Response[EnvelopeDeliveryView | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    account: str,
    webhook: str,
    delivery: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[EnvelopeDeliveryView | Problem]:
    """Sends a delivery's event again, as a new delivery with the same body.

    Args:
        account (str):
        webhook (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeDeliveryView | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        webhook=webhook,
        delivery=delivery,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    webhook: str,
    delivery: str,
    *,
    client: AuthenticatedClient | Client,
) -> EnvelopeDeliveryView | Problem | None:
    """Sends a delivery's event again, as a new delivery with the same body.

    Args:
        account (str):
        webhook (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeDeliveryView | Problem
    """

    return sync_detailed(
        account=account,
        webhook=webhook,
        delivery=delivery,
        client=client,
    ).parsed


async def asyncio_detailed(
    account: str,
    webhook: str,
    delivery: str,
    *,
    client: AuthenticatedClient | Client,
) -> Response[EnvelopeDeliveryView | Problem]:
    """Sends a delivery's event again, as a new delivery with the same body.

    Args:
        account (str):
        webhook (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeDeliveryView | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        webhook=webhook,
        delivery=delivery,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    webhook: str,
    delivery: str,
    *,
    client: AuthenticatedClient | Client,
) -> EnvelopeDeliveryView | Problem | None:
    """Sends a delivery's event again, as a new delivery with the same body.

    Args:
        account (str):
        webhook (str):
        delivery (str):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeDeliveryView | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            webhook=webhook,
            delivery=delivery,
            client=client,
        )
    ).parsed
