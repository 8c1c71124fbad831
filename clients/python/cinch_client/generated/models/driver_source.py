from typing import Literal

DriverSource = Literal["builtin", "plugin"]

DRIVER_SOURCE_VALUES: set[DriverSource] = {
    "builtin",
    "plugin",
}


def check_driver_source(value: str) -> DriverSource:
    if value in DRIVER_SOURCE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DRIVER_SOURCE_VALUES!r}"
    )
