from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.driver_add import DriverAdd
from ...models.envelope_driver_pinned import EnvelopeDriverPinned
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    *,
    body: DriverAdd,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/drivers",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeDriverPinned | Problem | None:
    if response.status_code == 201:
        response_201 = EnvelopeDriverPinned.from_dict(response.json())

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
) -> Response[EnvelopeDriverPinned | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DriverAdd,
) -> Response[EnvelopeDriverPinned | Problem]:
    """Installs a plugin from an OCI registry (every digest checked, the
    component loaded first, its signature checked as config.toml says); new
    turns run on it at once, running ones finish on the component they
    started with.

    Args:
        body (DriverAdd): A plugin to install from an OCI registry.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeDriverPinned | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: DriverAdd,
) -> EnvelopeDriverPinned | Problem | None:
    """Installs a plugin from an OCI registry (every digest checked, the
    component loaded first, its signature checked as config.toml says); new
    turns run on it at once, running ones finish on the component they
    started with.

    Args:
        body (DriverAdd): A plugin to install from an OCI registry.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeDriverPinned | Problem
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: DriverAdd,
) -> Response[EnvelopeDriverPinned | Problem]:
    """Installs a plugin from an OCI registry (every digest checked, the
    component loaded first, its signature checked as config.toml says); new
    turns run on it at once, running ones finish on the component they
    started with.

    Args:
        body (DriverAdd): A plugin to install from an OCI registry.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeDriverPinned | Problem]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: DriverAdd,
) -> EnvelopeDriverPinned | Problem | None:
    """Installs a plugin from an OCI registry (every digest checked, the
    component loaded first, its signature checked as config.toml says); new
    turns run on it at once, running ones finish on the component they
    started with.

    Args:
        body (DriverAdd): A plugin to install from an OCI registry.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeDriverPinned | Problem
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
