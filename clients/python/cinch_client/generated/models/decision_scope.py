from typing import Literal

DecisionScope = Literal["once", "session"]

DECISION_SCOPE_VALUES: set[DecisionScope] = {
    "once",
    "session",
}


def check_decision_scope(value: str) -> DecisionScope:
    if value in DECISION_SCOPE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {DECISION_SCOPE_VALUES!r}"
    )
