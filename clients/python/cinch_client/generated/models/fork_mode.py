from typing import Literal

ForkMode = Literal["brief", "native"]

FORK_MODE_VALUES: set[ForkMode] = {
    "brief",
    "native",
}


def check_fork_mode(value: str) -> ForkMode:
    if value in FORK_MODE_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {FORK_MODE_VALUES!r}")
