from typing import Literal

TaskDiffContext = Literal["hunks", "whole_files"]

TASK_DIFF_CONTEXT_VALUES: set[TaskDiffContext] = {
    "hunks",
    "whole_files",
}


def check_task_diff_context(value: str) -> TaskDiffContext:
    if value in TASK_DIFF_CONTEXT_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_DIFF_CONTEXT_VALUES!r}"
    )
