from typing import Literal

MessageKind = Literal[
    "ai-title",
    "approval",
    "assistant",
    "attachment",
    "queue-operation",
    "revert",
    "user",
]

MESSAGE_KIND_VALUES: set[MessageKind] = {
    "ai-title",
    "approval",
    "assistant",
    "attachment",
    "queue-operation",
    "revert",
    "user",
}


def check_message_kind(value: str) -> MessageKind:
    if value in MESSAGE_KIND_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {MESSAGE_KIND_VALUES!r}"
    )
