from typing import Literal

McpServerKind = Literal["http", "stdio"]

MCP_SERVER_KIND_VALUES: set[McpServerKind] = {
    "http",
    "stdio",
}


def check_mcp_server_kind(value: str) -> McpServerKind:
    if value in MCP_SERVER_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MCP_SERVER_KIND_VALUES!r}"
    )
