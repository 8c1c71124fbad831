from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.envelope_usage_report import EnvelopeUsageReport
from ...models.get_usage_group_by import GetUsageGroupBy
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    account: str,
    *,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    group_by: GetUsageGroupBy | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["from"] = from_

    params["to"] = to

    json_group_by: str | Unset = UNSET
    if not isinstance(group_by, Unset):
        json_group_by = group_by

    params["group_by"] = json_group_by

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/accounts/{account}/usage".format(
            account=quote(str(account), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeUsageReport | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopeUsageReport.from_dict(response.json())

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
) -> Response[EnvelopeUsageReport | Problem]:
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
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    group_by: GetUsageGroupBy | Unset = UNSET,
) -> Response[EnvelopeUsageReport | Problem]:
    """The account's usage: tokens and cost of its turns (sessions' and code
    tasks'), the cost as the harnesses reported it or as cinch estimates it.

    Args:
        account (str):
        from_ (str | Unset):
        to (str | Unset):
        group_by (GetUsageGroupBy | Unset): What an account's usage is grouped by.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeUsageReport | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        from_=from_,
        to=to,
        group_by=group_by,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    group_by: GetUsageGroupBy | Unset = UNSET,
) -> EnvelopeUsageReport | Problem | None:
    """The account's usage: tokens and cost of its turns (sessions' and code
    tasks'), the cost as the harnesses reported it or as cinch estimates it.

    Args:
        account (str):
        from_ (str | Unset):
        to (str | Unset):
        group_by (GetUsageGroupBy | Unset): What an account's usage is grouped by.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeUsageReport | Problem
    """

    return sync_detailed(
        account=account,
        client=client,
        from_=from_,
        to=to,
        group_by=group_by,
    ).parsed


async def asyncio_detailed(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    group_by: GetUsageGroupBy | Unset = UNSET,
) -> Response[EnvelopeUsageReport | Problem]:
    """The account's usage: tokens and cost of its turns (sessions' and code
    tasks'), the cost as the harnesses reported it or as cinch estimates it.

    Args:
        account (str):
        from_ (str | Unset):
        to (str | Unset):
        group_by (GetUsageGroupBy | Unset): What an account's usage is grouped by.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeUsageReport | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        from_=from_,
        to=to,
        group_by=group_by,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    *,
    client: AuthenticatedClient | Client,
    from_: str | Unset = UNSET,
    to: str | Unset = UNSET,
    group_by: GetUsageGroupBy | Unset = UNSET,
) -> EnvelopeUsageReport | Problem | None:
    """The account's usage: tokens and cost of its turns (sessions' and code
    tasks'), the cost as the harnesses reported it or as cinch estimates it.

    Args:
        account (str):
        from_ (str | Unset):
        to (str | Unset):
        group_by (GetUsageGroupBy | Unset): What an account's usage is grouped by.

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        EnvelopeUsageReport | Problem
    """

    return (
        await asyncio_detailed(
            account=account,
            client=client,
            from_=from_,
            to=to,
            group_by=group_by,
        )
    ).parsed
