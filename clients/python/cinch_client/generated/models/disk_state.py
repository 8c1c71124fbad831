from typing import Literal

DiskState = Literal["full", "low", "ok", "unknown"]

DISK_STATE_VALUES: set[DiskState] = {
    "full",
    "low",
    "ok",
    "unknown",
}


def check_disk_state(value: str) -> DiskState:
    if value in DISK_STATE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DISK_STATE_VALUES!r}"
    )
