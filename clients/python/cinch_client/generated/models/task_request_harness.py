from typing import Literal

TaskRequestHarness = Literal[
    "claude",
    "claude-acp",
    "cline",
    "codex",
    "codex-acp",
    "copilot",
    "cursor",
    "droid",
    "gemini",
    "gemini-acp",
    "kilo",
    "opencode",
    "qwen",
]

TASK_REQUEST_HARNESS_VALUES: set[TaskRequestHarness] = {
    "claude",
    "claude-acp",
    "cline",
    "codex",
    "codex-acp",
    "copilot",
    "cursor",
    "droid",
    "gemini",
    "gemini-acp",
    "kilo",
    "opencode",
    "qwen",
}


def check_task_request_harness(value: str) -> TaskRequestHarness:
    if value in TASK_REQUEST_HARNESS_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {TASK_REQUEST_HARNESS_VALUES!r}"
    )
