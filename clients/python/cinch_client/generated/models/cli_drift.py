from typing import Literal

CliDrift = Literal["tested", "unknown", "untested"]

CLI_DRIFT_VALUES: set[CliDrift] = {
    "tested",
    "unknown",
    "untested",
}


def check_cli_drift(value: str) -> CliDrift:
    if value in CLI_DRIFT_VALUES:
        return value
    raise TypeError(f"Unexpected value {value!r}. Expected one of {CLI_DRIFT_VALUES!r}")
