from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.environment_update_env import EnvironmentUpdateEnv
    from ..models.environment_update_secrets import EnvironmentUpdateSecrets
    from ..models.mcp_server_spec import McpServerSpec


T = TypeVar("T", bound="EnvironmentUpdate")


@_attrs_define
class EnvironmentUpdate:
    """Changes to an environment; absent fields stay as they are.

    Attributes:
        allowed_hosts (list[str] | None | Unset):
        allowed_tcp_ports (list[int] | None | Unset):
        approvals (ApprovalPolicy | None | Unset):
        env (EnvironmentUpdateEnv | Unset):
        mcp_servers (list[McpServerSpec] | None | Unset): New MCP servers, replacing the old (`[]` removes them all).
        name (None | str | Unset): A new name: letters, digits and `_ . -`, at most 100 characters, not only dots.
        repository (None | str | Unset): A new repository: an absolute local path, or a git URL.
        secrets (EnvironmentUpdateSecrets | Unset):
        setup (list[str] | None | Unset): New setup commands, replacing the old.
        watchdog_minutes (int | None | Unset): A new watchdog in minutes (1 to 60); null goes back to the server's.
    """

    allowed_hosts: list[str] | None | Unset = UNSET
    allowed_tcp_ports: list[int] | None | Unset = UNSET
    approvals: ApprovalPolicy | None | Unset = UNSET
    env: EnvironmentUpdateEnv | Unset = UNSET
    mcp_servers: list[McpServerSpec] | None | Unset = UNSET
    name: None | str | Unset = UNSET
    repository: None | str | Unset = UNSET
    secrets: EnvironmentUpdateSecrets | Unset = UNSET
    setup: list[str] | None | Unset = UNSET
    watchdog_minutes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.approval_policy import ApprovalPolicy

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

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        repository: None | str | Unset
        if isinstance(self.repository, Unset):
            repository = UNSET
        else:
            repository = self.repository

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

        field_dict.update({})
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
        if name is not UNSET:
            field_dict["name"] = name
        if repository is not UNSET:
            field_dict["repository"] = repository
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
        from ..models.environment_update_env import EnvironmentUpdateEnv
        from ..models.environment_update_secrets import EnvironmentUpdateSecrets
        from ..models.mcp_server_spec import McpServerSpec

        d = dict(src_dict)

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
        env: EnvironmentUpdateEnv | Unset
        if isinstance(_env, Unset):
            env = UNSET
        else:
            env = EnvironmentUpdateEnv.from_dict(_env)

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

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        def _parse_repository(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repository = _parse_repository(d.pop("repository", UNSET))

        _secrets = d.pop("secrets", UNSET)
        secrets: EnvironmentUpdateSecrets | Unset
        if isinstance(_secrets, Unset):
            secrets = UNSET
        else:
            secrets = EnvironmentUpdateSecrets.from_dict(_secrets)

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

        environment_update = cls(
            allowed_hosts=allowed_hosts,
            allowed_tcp_ports=allowed_tcp_ports,
            approvals=approvals,
            env=env,
            mcp_servers=mcp_servers,
            name=name,
            repository=repository,
            secrets=secrets,
            setup=setup,
            watchdog_minutes=watchdog_minutes,
        )

        return environment_update
