from typing import Literal

AgentCreateHarnessType1 = Literal[
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

AGENT_CREATE_HARNESS_TYPE_1_VALUES: set[AgentCreateHarnessType1] = {
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


def check_agent_create_harness_type_1(value: str) -> AgentCreateHarnessType1:
    if value in AGENT_CREATE_HARNESS_TYPE_1_VALUES:
        return value
    raise TypeError(
        f"Unexpected value {value!r}. Expected one of {AGENT_CREATE_HARNESS_TYPE_1_VALUES!r}"
    )
