from typing import Literal

TaskStatus = Literal["active"]

TASK_STATUS_VALUES: set[TaskStatus] = {
    "active",
}


def check_task_status(value: str) -> TaskStatus:
    if value in TASK_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_STATUS_VALUES!r}"
    )
