from typing import Literal

TokenOwnerKind = Literal["agent", "member"]

TOKEN_OWNER_KIND_VALUES: set[TokenOwnerKind] = {
    "agent",
    "member",
}


def check_token_owner_kind(value: str) -> TokenOwnerKind:
    if value in TOKEN_OWNER_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TOKEN_OWNER_KIND_VALUES!r}"
    )
