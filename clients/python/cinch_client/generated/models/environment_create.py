from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.environment_create_env import EnvironmentCreateEnv
    from ..models.environment_create_secrets import EnvironmentCreateSecrets
    from ..models.mcp_server_spec import McpServerSpec


T = TypeVar("T", bound="EnvironmentCreate")


@_attrs_define
class EnvironmentCreate:
    """A new environment.

    Attributes:
        name (str): Letters, digits and `_ . -`, at most 100 characters, not only dots; unique in the account.
        repository (str): An absolute local path, or a git URL (`https://`, `http://`, `ssh://`, `git://`, `file://`,
            `git@host:path`).
        allowed_hosts (list[str] | None | Unset):
        allowed_tcp_ports (list[int] | None | Unset):
        approvals (ApprovalPolicy | None | Unset):
        env (EnvironmentCreateEnv | Unset):
        mcp_servers (list[McpServerSpec] | None | Unset): MCP servers its harnesses get (at most 20): claude, codex and
            gemini
            take them; a cursor turn in this environment is refused.
        secrets (EnvironmentCreateSecrets | Unset):
        setup (list[str] | None | Unset): Commands run to set a workspace up, in order.
        watchdog_minutes (int | None | Unset): Minutes its harness may write nothing before the turn is stopped
            (1 to 60); absent or null: the server's watchdog (10 by default).
    """

    name: str
    repository: str
    allowed_hosts: list[str] | None | Unset = UNSET
    allowed_tcp_ports: list[int] | None | Unset = UNSET
    approvals: ApprovalPolicy | None | Unset = UNSET
    env: EnvironmentCreateEnv | Unset = UNSET
    mcp_servers: list[McpServerSpec] | None | Unset = UNSET
    secrets: EnvironmentCreateSecrets | Unset = UNSET
    setup: list[str] | None | Unset = UNSET
    watchdog_minutes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.approval_policy import ApprovalPolicy

        name = self.name

        repository = self.repository

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

        env: dict[str, Any] | Unset = UNSET
        if not isinstance(self.env, Unset):
            env = self.env.to_dict()

        mcp_servers: list[dict[str, Any]] | None | Unset
        if isinstance(self.mcp_servers, Unset):
            mcp_servers = UNSET
        elif isinstance(self.mcp_servers, list):
            mcp_servers = []
            for mcp_servers_type_0_item_data in self.mcp_servers:
                mcp_servers_type_0_item = mcp_servers_type_0_item_data.to_dict()
                mcp_servers.append(mcp_servers_type_0_item)

        else:
            mcp_servers = self.mcp_servers

        secrets: dict[str, Any] | Unset = UNSET
        if not isinstance(self.secrets, Unset):
            secrets = self.secrets.to_dict()

        setup: list[str] | None | Unset
        if isinstance(self.setup, Unset):
            setup = UNSET
        elif isinstance(self.setup, list):
            setup = self.setup

        else:
            setup = self.setup

        watchdog_minutes: int | None | Unset
        if isinstance(self.watchdog_minutes, Unset):
            watchdog_minutes = UNSET
        else:
            watchdog_minutes = self.watchdog_minutes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "repository": repository,
            }
        )
        if allowed_hosts is not UNSET:
            field_dict["allowed_hosts"] = allowed_hosts
        if allowed_tcp_ports is not UNSET:
            field_dict["allowed_tcp_ports"] = allowed_tcp_ports
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if env is not UNSET:
            field_dict["env"] = env
        if mcp_servers is not UNSET:
            field_dict["mcp_servers"] = mcp_servers
        if secrets is not UNSET:
            field_dict["secrets"] = secrets
        if setup is not UNSET:
            field_dict["setup"] = setup
        if watchdog_minutes is not UNSET:
            field_dict["watchdog_minutes"] = watchdog_minutes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_policy import ApprovalPolicy
        from ..models.environment_create_env import EnvironmentCreateEnv
        from ..models.environment_create_secrets import EnvironmentCreateSecrets
        from ..models.mcp_server_spec import McpServerSpec

        d = dict(src_dict)
        name = d.pop("name")

        repository = d.pop("repository")

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

        _env = d.pop("env", UNSET)
        env: EnvironmentCreateEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = EnvironmentCreateEnv.from_dict(_env)

        def _parse_mcp_servers(data: object) -> list[McpServerSpec] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                mcp_servers_type_0 = []
                _mcp_servers_type_0 = data
                for mcp_servers_type_0_item_data in _mcp_servers_type_0:
                    mcp_servers_type_0_item = McpServerSpec.from_dict(
                        mcp_servers_type_0_item_data
                    )

                    mcp_servers_type_0.append(mcp_servers_type_0_item)

                return mcp_servers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[McpServerSpec] | None | Unset, data)

        mcp_servers = _parse_mcp_servers(d.pop("mcp_servers", UNSET))

        _secrets = d.pop("secrets", UNSET)
        secrets: EnvironmentCreateSecrets | Unset
        if isinstance(_secrets, Unset):
            secrets = UNSET
        else:
            secrets = EnvironmentCreateSecrets.from_dict(_secrets)

        def _parse_setup(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                setup_type_0 = cast(list[str], data)

                return setup_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        setup = _parse_setup(d.pop("setup", UNSET))

        def _parse_watchdog_minutes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        watchdog_minutes = _parse_watchdog_minutes(d.pop("watchdog_minutes", UNSET))

        environment_create = cls(
            name=name,
            repository=repository,
            allowed_hosts=allowed_hosts,
            allowed_tcp_ports=allowed_tcp_ports,
            approvals=approvals,
            env=env,
            mcp_servers=mcp_servers,
            secrets=secrets,
            setup=setup,
            watchdog_minutes=watchdog_minutes,
        )

        return environment_create
