from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.decision_body import DecisionBody
from ...models.envelope_approval import EnvelopeApproval
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    account: str,
    approval: str,
    *,
    body: DecisionBody,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/accounts/{account}/approvals/{approval}/decision".format(
            account=quote(str(account), safe=""),
            approval=quote(str(approval), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> EnvelopeApproval | Problem | None:
    if response.status_code == 200:
        response_200 = EnvelopeApproval.from_dict(response.json())

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
    body: DecisionBody,
) -> Response[EnvelopeApproval | Problem]:
    """Decides an approval (`decision`), or answers a question (`answer`). The
    first decision wins: the same decision again answers 200, a different one
    409 naming who decided; so does a decision on an approval whose turn has
    ended. A `decision` on a question or an `answer` on a permission request
    is a 422 saying which to send.

    Args:
        account (str):
        approval (str):
        body (DecisionBody): A decision on an approval: `decision` (with `scope` and `message`)
            for a
            permission request, `answer` for a question (`kind: "question"`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        approval=approval,
        body=body,
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
    body: DecisionBody,
) -> EnvelopeApproval | Problem | None:
    """Decides an approval (`decision`), or answers a question (`answer`). The
    first decision wins: the same decision again answers 200, a different one
    409 naming who decided; so does a decision on an approval whose turn has
    ended. A `decision` on a question or an `answer` on a permission request
    is a 422 saying which to send.

    Args:
        account (str):
        approval (str):
        body (DecisionBody): A decision on an approval: `decision` (with `scope` and `message`)
            for a
            permission request, `answer` for a question (`kind: "question"`).

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
        body=body,
    ).parsed


async def asyncio_detailed(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
    body: DecisionBody,
) -> Response[EnvelopeApproval | Problem]:
    """Decides an approval (`decision`), or answers a question (`answer`). The
    first decision wins: the same decision again answers 200, a different one
    409 naming who decided; so does a decision on an approval whose turn has
    ended. A `decision` on a question or an `answer` on a permission request
    is a 422 saying which to send.

    Args:
        account (str):
        approval (str):
        body (DecisionBody): A decision on an approval: `decision` (with `scope` and `message`)
            for a
            permission request, `answer` for a question (`kind: "question"`).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[EnvelopeApproval | Problem]
    """

    kwargs = _get_kwargs(
        account=account,
        approval=approval,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    account: str,
    approval: str,
    *,
    client: AuthenticatedClient | Client,
    body: DecisionBody,
) -> EnvelopeApproval | Problem | None:
    """Decides an approval (`decision`), or answers a question (`answer`). The
    first decision wins: the same decision again answers 200, a different one
    409 naming who decided; so does a decision on an approval whose turn has
    ended. A `decision` on a question or an `answer` on a permission request
    is a 422 saying which to send.

    Args:
        account (str):
        approval (str):
        body (DecisionBody): A decision on an approval: `decision` (with `scope` and `message`)
            for a
            permission request, `answer` for a question (`kind: "question"`).

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
            body=body,
        )
    ).parsed
