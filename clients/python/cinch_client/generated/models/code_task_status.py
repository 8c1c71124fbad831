from typing import Literal

CodeTaskStatus = Literal[
    "cancelled", "completed", "failed", "interrupted", "running", "timed_out"
]

CODE_TASK_STATUS_VALUES: set[CodeTaskStatus] = {
    "cancelled",
    "completed",
    "failed",
    "interrupted",
    "running",
    "timed_out",
}


def check_code_task_status(value: str) -> CodeTaskStatus:
    if value in CODE_TASK_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CODE_TASK_STATUS_VALUES!r}"
    )
