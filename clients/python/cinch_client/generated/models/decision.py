from typing import Literal

Decision = Literal["allow", "deny"]

DECISION_VALUES: set[Decision] = {
    "allow",
    "deny",
}


def check_decision(value: str) -> Decision:
    if value in DECISION_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {DECISION_VALUES!r}")
