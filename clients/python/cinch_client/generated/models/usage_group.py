from typing import Literal

UsageGroup = Literal["day", "harness", "model"]

USAGE_GROUP_VALUES: set[UsageGroup] = {
    "day",
    "harness",
    "model",
}


def check_usage_group(value: str) -> UsageGroup:
    if value in USAGE_GROUP_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {USAGE_GROUP_VALUES!r}"
    )
