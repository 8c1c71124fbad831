from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.envelope_environment_view_data_env import (
        EnvelopeEnvironmentViewDataEnv,
    )
    from ..models.mcp_server_spec import McpServerSpec


T = TypeVar("T", bound="EnvelopeEnvironmentViewData")


@_attrs_define
class EnvelopeEnvironmentViewData:
    """An environment as clients see it: secrets by name only.

    Attributes:
        account_id (str): The account it belongs to.
        created_at (str): When it was created (RFC 3339).
        env (EnvelopeEnvironmentViewDataEnv): Variables set for the harness.
        id (str): Its id.
        mcp_servers (list[McpServerSpec]): MCP servers its harnesses get; a header that takes a secret shows
            `{"secret": NAME}`, never the value.
        name (str): Its name, unique in the account (the jobs API's `repo`).
        repository (str): A local path or a git URL to clone.
        secret_names (list[str]): The names of its secrets; their values are never returned.
        setup (list[str]): Commands run to set a workspace up, in order.
        updated_at (str): When it last changed (RFC 3339).
        allowed_hosts (list[str] | None | Unset): The only hosts its harnesses and setup commands may reach, through
            cinch's HTTP proxy (names, `*.domain` wildcards, addresses); null: any.
        allowed_tcp_ports (list[int] | None | Unset): The only TCP ports its harnesses may connect to; null: any.
        approvals (ApprovalPolicy | None | Unset):
        watchdog_minutes (int | None | Unset): Minutes its harness may write nothing before the turn is stopped
            (`timed_out`); null: the server's watchdog.
    """

    account_id: str
    created_at: str
    env: EnvelopeEnvironmentViewDataEnv
    id: str
    mcp_servers: list[McpServerSpec]
    name: str
    repository: str
    secret_names: list[str]
    setup: list[str]
    updated_at: str
    allowed_hosts: list[str] | None | Unset = UNSET
    allowed_tcp_ports: list[int] | None | Unset = UNSET
    approvals: ApprovalPolicy | None | Unset = UNSET
    watchdog_minutes: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.approval_policy import ApprovalPolicy

        account_id = self.account_id

        created_at = self.created_at

        env = self.env.to_dict()

        id = self.id

        mcp_servers = []
        for mcp_servers_item_data in self.mcp_servers:
            mcp_servers_item = mcp_servers_item_data.to_dict()
            mcp_servers.append(mcp_servers_item)

        name = self.name

        repository = self.repository

        secret_names = self.secret_names

        setup = self.setup

        updated_at = self.updated_at

        allowed_hosts: list[str] | None | Unset
        if isinstance(self.allowed_hosts, Unset):
            allowed_hosts = UNSET
        elif isinstance(self.allowed_hosts, list):
            allowed_hosts = self.allowed_hosts

        else:
            allowed_hosts = self.allowed_hosts

        allowed_tcp_ports: list[int] | None | Unset
        if isinstance(self.allowed_tcp_ports, Unset):
            allowed_tcp_ports = UNSET
        elif isinstance(self.allowed_tcp_ports, list):
            allowed_tcp_ports = self.allowed_tcp_ports

        else:
            allowed_tcp_ports = self.allowed_tcp_ports

        approvals: dict[str, Any] | None | Unset
        if isinstance(self.approvals, Unset):
            approvals = UNSET
        elif isinstance(self.approvals, ApprovalPolicy):
            approvals = self.approvals.to_dict()
        else:
            approvals = self.approvals

        watchdog_minutes: int | None | Unset
        if isinstance(self.watchdog_minutes, Unset):
            watchdog_minutes = UNSET
        else:
            watchdog_minutes = self.watchdog_minutes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "created_at": created_at,
                "env": env,
                "id": id,
                "mcp_servers": mcp_servers,
                "name": name,
                "repository": repository,
                "secret_names": secret_names,
                "setup": setup,
                "updated_at": updated_at,
            }
        )
        if allowed_hosts is not UNSET:
            field_dict["allowed_hosts"] = allowed_hosts
        if allowed_tcp_ports is not UNSET:
            field_dict["allowed_tcp_ports"] = allowed_tcp_ports
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if watchdog_minutes is not UNSET:
            field_dict["watchdog_minutes"] = watchdog_minutes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_policy import ApprovalPolicy
        from ..models.envelope_environment_view_data_env import (
            EnvelopeEnvironmentViewDataEnv,
        )
        from ..models.mcp_server_spec import McpServerSpec

        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        env = EnvelopeEnvironmentViewDataEnv.from_dict(d.pop("env"))

        id = d.pop("id")

        mcp_servers = []
        _mcp_servers = d.pop("mcp_servers")
        for mcp_servers_item_data in _mcp_servers:
            mcp_servers_item = McpServerSpec.from_dict(mcp_servers_item_data)

            mcp_servers.append(mcp_servers_item)

        name = d.pop("name")

        repository = d.pop("repository")

        secret_names = cast(list[str], d.pop("secret_names"))

        setup = cast(list[str], d.pop("setup"))

        updated_at = d.pop("updated_at")

        def _parse_allowed_hosts(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowed_hosts_type_0 = cast(list[str], data)

                return allowed_hosts_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        allowed_hosts = _parse_allowed_hosts(d.pop("allowed_hosts", UNSET))

        def _parse_allowed_tcp_ports(data: object) -> list[int] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                allowed_tcp_ports_type_0 = cast(list[int], data)

                return allowed_tcp_ports_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[int] | None | Unset, data)

        allowed_tcp_ports = _parse_allowed_tcp_ports(d.pop("allowed_tcp_ports", UNSET))

        def _parse_approvals(data: object) -> ApprovalPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approvals_type_1 = ApprovalPolicy.from_dict(data)

                return approvals_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalPolicy | None | Unset, data)

        approvals = _parse_approvals(d.pop("approvals", UNSET))

        def _parse_watchdog_minutes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        watchdog_minutes = _parse_watchdog_minutes(d.pop("watchdog_minutes", UNSET))

        envelope_environment_view_data = cls(
            account_id=account_id,
            created_at=created_at,
            env=env,
            id=id,
            mcp_servers=mcp_servers,
            name=name,
            repository=repository,
            secret_names=secret_names,
            setup=setup,
            updated_at=updated_at,
            allowed_hosts=allowed_hosts,
            allowed_tcp_ports=allowed_tcp_ports,
            approvals=approvals,
            watchdog_minutes=watchdog_minutes,
        )

        envelope_environment_view_data.additional_properties = d
        return envelope_environment_view_data

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
