from typing import Literal

GetUsageGroupBy = Literal["day", "harness", "model"]

GET_USAGE_GROUP_BY_VALUES: set[GetUsageGroupBy] = {
    "day",
    "harness",
    "model",
}


def check_get_usage_group_by(value: str) -> GetUsageGroupBy:
    if value in GET_USAGE_GROUP_BY_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {GET_USAGE_GROUP_BY_VALUES!r}"
    )
