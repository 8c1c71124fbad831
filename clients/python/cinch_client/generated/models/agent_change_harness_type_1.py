from typing import Literal

AgentChangeHarnessType1 = Literal[
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

AGENT_CHANGE_HARNESS_TYPE_1_VALUES: set[AgentChangeHarnessType1] = {
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


def check_agent_change_harness_type_1(value: str) -> AgentChangeHarnessType1:
    if value in AGENT_CHANGE_HARNESS_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_CHANGE_HARNESS_TYPE_1_VALUES!r}"
    )
