from typing import Literal

CredentialSource = Literal["not_needed", "pass_env", "server_secrets"]

CREDENTIAL_SOURCE_VALUES: set[CredentialSource] = {
    "not_needed",
    "pass_env",
    "server_secrets",
}


def check_credential_source(value: str) -> CredentialSource:
    if value in CREDENTIAL_SOURCE_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {CREDENTIAL_SOURCE_VALUES!r}"
    )
