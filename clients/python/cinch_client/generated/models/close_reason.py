from typing import Literal

CloseReason = Literal[
    "completed",
    "idle_timeout",
    "resource_exhausted",
    "setup_failure",
    "snapshot_failure",
    "turn_failure",
    "turn_interrupted",
    "user_closed",
    "vm_failure",
    "waiting_timeout",
]

CLOSE_REASON_VALUES: set[CloseReason] = {
    "completed",
    "idle_timeout",
    "resource_exhausted",
    "setup_failure",
    "snapshot_failure",
    "turn_failure",
    "turn_interrupted",
    "user_closed",
    "vm_failure",
    "waiting_timeout",
}


def check_close_reason(value: str) -> CloseReason:
    if value in CLOSE_REASON_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CLOSE_REASON_VALUES!r}"
    )
