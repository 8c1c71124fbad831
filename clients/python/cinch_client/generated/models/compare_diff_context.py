from typing import Literal

CompareDiffContext = Literal["hunks", "whole_files"]

COMPARE_DIFF_CONTEXT_VALUES: set[CompareDiffContext] = {
    "hunks",
    "whole_files",
}


def check_compare_diff_context(value: str) -> CompareDiffContext:
    if value in COMPARE_DIFF_CONTEXT_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {COMPARE_DIFF_CONTEXT_VALUES!r}"
    )
