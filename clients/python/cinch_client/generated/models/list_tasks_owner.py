from typing import Literal

ListTasksOwner = Literal["none"]

LIST_TASKS_OWNER_VALUES: set[ListTasksOwner] = {
    "none",
}


def check_list_tasks_owner(value: str) -> ListTasksOwner:
    if value in LIST_TASKS_OWNER_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {LIST_TASKS_OWNER_VALUES!r}"
    )
