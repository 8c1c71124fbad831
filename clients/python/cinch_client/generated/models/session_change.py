from typing import Literal

SessionChange = Literal["closed"]

SESSION_CHANGE_VALUES: set[SessionChange] = {
    "closed",
}


def check_session_change(value: str) -> SessionChange:
    if value in SESSION_CHANGE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SESSION_CHANGE_VALUES!r}"
    )
