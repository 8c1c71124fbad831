from typing import Literal

ApprovalMode = Literal["allow", "ask", "deny"]

APPROVAL_MODE_VALUES: set[ApprovalMode] = {
    "allow",
    "ask",
    "deny",
}


def check_approval_mode(value: str) -> ApprovalMode:
    if value in APPROVAL_MODE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {APPROVAL_MODE_VALUES!r}"
    )
