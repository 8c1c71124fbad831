from typing import Literal

ListApprovalsStatus = Literal["pending", "resolved"]

LIST_APPROVALS_STATUS_VALUES: set[ListApprovalsStatus] = {
    "pending",
    "resolved",
}


def check_list_approvals_status(value: str) -> ListApprovalsStatus:
    if value in LIST_APPROVALS_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {LIST_APPROVALS_STATUS_VALUES!r}"
    )
