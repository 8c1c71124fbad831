from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.mcp_server_kind import McpServerKind, check_mcp_server_kind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.mcp_server_spec_env_type_0 import McpServerSpecEnvType0
    from ..models.mcp_server_spec_headers_type_0 import McpServerSpecHeadersType0


T = TypeVar("T", bound="McpServerSpec")


@_attrs_define
class McpServerSpec:
    """An MCP server a harness gets: a stdio program (`command`, `args`, `env`)
    or an HTTP URL (`url`, `headers`).

        Attributes:
            name (str): 1 to 64 letters, digits, `_` and `-`, unique in the environment; harnesses prefix the server's tools
                with it.
            type_ (McpServerKind): The kind of a server, as clients write it in `type`.
            args (list[str] | None | Unset): stdio: its arguments.
            command (None | str | Unset): stdio: the program to start.
            env (McpServerSpecEnvType0 | None | Unset):
            headers (McpServerSpecHeadersType0 | None | Unset):
            url (None | str | Unset): http: the URL (`http://` or `https://`).
    """

    name: str
    type_: McpServerKind
    args: list[str] | None | Unset = UNSET
    command: None | str | Unset = UNSET
    env: McpServerSpecEnvType0 | None | Unset = UNSET
    headers: McpServerSpecHeadersType0 | None | Unset = UNSET
    url: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_server_spec_env_type_0 import McpServerSpecEnvType0
        from ..models.mcp_server_spec_headers_type_0 import McpServerSpecHeadersType0

        name = self.name

        type_: str = self.type_

        args: list[str] | None | Unset
        if isinstance(self.args, Unset):
            args = UNSET
        elif isinstance(self.args, list):
            args = self.args

        else:
            args = self.args

        command: None | str | Unset
        if isinstance(self.command, Unset):
            command = UNSET
        else:
            command = self.command

        env: dict[str, Any] | None | Unset
        if isinstance(self.env, Unset):
            env = UNSET
        elif isinstance(self.env, McpServerSpecEnvType0):
            env = self.env.to_dict()
        else:
            env = self.env

        headers: dict[str, Any] | None | Unset
        if isinstance(self.headers, Unset):
            headers = UNSET
        elif isinstance(self.headers, McpServerSpecHeadersType0):
            headers = self.headers.to_dict()
        else:
            headers = self.headers

        url: None | str | Unset
        if isinstance(self.url, Unset):
            url = UNSET
        else:
            url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "type": type_,
            }
        )
        if args is not UNSET:
            field_dict["args"] = args
        if command is not UNSET:
            field_dict["command"] = command
        if env is not UNSET:
            field_dict["env"] = env
        if headers is not UNSET:
            field_dict["headers"] = headers
        if url is not UNSET:
            field_dict["url"] = url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_spec_env_type_0 import McpServerSpecEnvType0
        from ..models.mcp_server_spec_headers_type_0 import McpServerSpecHeadersType0

        d = dict(src_dict)
        name = d.pop("name")

        type_ = check_mcp_server_kind(d.pop("type"))

        def _parse_args(data: object) -> list[str] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                args_type_0 = cast(list[str], data)

                return args_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[str] | None | Unset, data)

        args = _parse_args(d.pop("args", UNSET))

        def _parse_command(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        command = _parse_command(d.pop("command", UNSET))

        def _parse_env(data: object) -> McpServerSpecEnvType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                env_type_0 = McpServerSpecEnvType0.from_dict(data)

                return env_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpServerSpecEnvType0 | None | Unset, data)

        env = _parse_env(d.pop("env", UNSET))

        def _parse_headers(data: object) -> McpServerSpecHeadersType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                headers_type_0 = McpServerSpecHeadersType0.from_dict(data)

                return headers_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(McpServerSpecHeadersType0 | None | Unset, data)

        headers = _parse_headers(d.pop("headers", UNSET))

        def _parse_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        url = _parse_url(d.pop("url", UNSET))

        mcp_server_spec = cls(
            name=name,
            type_=type_,
            args=args,
            command=command,
            env=env,
            headers=headers,
            url=url,
        )

        return mcp_server_spec
