from typing import Literal

ListMessagesDirection = Literal["asc", "desc"]

LIST_MESSAGES_DIRECTION_VALUES: set[ListMessagesDirection] = {
    "asc",
    "desc",
}


def check_list_messages_direction(value: str) -> ListMessagesDirection:
    if value in LIST_MESSAGES_DIRECTION_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {LIST_MESSAGES_DIRECTION_VALUES!r}"
    )
