from typing import Literal

SessionStatus = Literal["booting", "closed", "idle", "running", "waiting"]

SESSION_STATUS_VALUES: set[SessionStatus] = {
    "booting",
    "closed",
    "idle",
    "running",
    "waiting",
}


def check_session_status(value: str) -> SessionStatus:
    if value in SESSION_STATUS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {SESSION_STATUS_VALUES!r}"
    )
