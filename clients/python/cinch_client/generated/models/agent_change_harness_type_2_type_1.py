from typing import Literal

AgentChangeHarnessType2Type1 = Literal[
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

AGENT_CHANGE_HARNESS_TYPE_2_TYPE_1_VALUES: set[AgentChangeHarnessType2Type1] = {
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


def check_agent_change_harness_type_2_type_1(
    value: str,
) -> AgentChangeHarnessType2Type1:
    if value in AGENT_CHANGE_HARNESS_TYPE_2_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_CHANGE_HARNESS_TYPE_2_TYPE_1_VALUES!r}"
    )
