from typing import Literal

RebuiltFrom = Literal["branch", "checkpoint"]

REBUILT_FROM_VALUES: set[RebuiltFrom] = {
    "branch",
    "checkpoint",
}


def check_rebuilt_from(value: str) -> RebuiltFrom:
    if value in REBUILT_FROM_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {REBUILT_FROM_VALUES!r}"
    )
