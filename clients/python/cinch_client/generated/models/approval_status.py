from typing import Literal

ApprovalStatus = Literal[
    "allowed", "answered", "cancelled", "denied", "expired", "pending"
]

APPROVAL_STATUS_VALUES: set[ApprovalStatus] = {
    "allowed",
    "answered",
    "cancelled",
    "denied",
    "expired",
    "pending",
}


def check_approval_status(value: str) -> ApprovalStatus:
    if value in APPROVAL_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {APPROVAL_STATUS_VALUES!r}"
    )
