from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.approval_mode import ApprovalMode, check_approval_mode
from ..models.decision import Decision, check_decision
from ..types import UNSET, Unset

T = TypeVar("T", bound="ApprovalPolicy")


@_attrs_define
class ApprovalPolicy:
    """When and how the agent's permission requests are decided.

    Attributes:
        allow (list[str] | Unset): Rules for tools allowed without asking: `Read`, `Bash(git status*)`.
        deny (list[str] | Unset): Rules for tools refused without asking: `Bash(git push*)`, `Write(.env*)`.
        mode (ApprovalMode | Unset): When the agent's permission requests are asked.
        on_timeout (Decision | None | Unset):
        timeout_seconds (int | None | Unset): Seconds a request waits for a decision (1 to 86400; default 600).
    """

    allow: list[str] | Unset = UNSET
    deny: list[str] | Unset = UNSET
    mode: ApprovalMode | Unset = UNSET
    on_timeout: Decision | None | Unset = UNSET
    timeout_seconds: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        allow: list[str] | Unset = UNSET
        if not isinstance(self.allow, Unset):
            allow = self.allow

        deny: list[str] | Unset = UNSET
        if not isinstance(self.deny, Unset):
            deny = self.deny

        mode: str | Unset = UNSET
        if not isinstance(self.mode, Unset):
            mode = self.mode

        on_timeout: None | str | Unset
        if isinstance(self.on_timeout, Unset):
            on_timeout = UNSET
        elif isinstance(self.on_timeout, str):
            on_timeout = self.on_timeout
        else:
            on_timeout = self.on_timeout

        timeout_seconds: int | None | Unset
        if isinstance(self.timeout_seconds, Unset):
            timeout_seconds = UNSET
        else:
            timeout_seconds = self.timeout_seconds

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if allow is not UNSET:
            field_dict["allow"] = allow
        if deny is not UNSET:
            field_dict["deny"] = deny
        if mode is not UNSET:
            field_dict["mode"] = mode
        if on_timeout is not UNSET:
            field_dict["on_timeout"] = on_timeout
        if timeout_seconds is not UNSET:
            field_dict["timeout_seconds"] = timeout_seconds

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        allow = cast(list[str], d.pop("allow", UNSET))

        deny = cast(list[str], d.pop("deny", UNSET))

        _mode = d.pop("mode", UNSET)
        mode: ApprovalMode | Unset
        if isinstance(_mode, Unset):
            mode = UNSET
        else:
            mode = check_approval_mode(_mode)

        def _parse_on_timeout(data: object) -> Decision | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                on_timeout_type_1 = check_decision(data)

                return on_timeout_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Decision | None | Unset, data)

        on_timeout = _parse_on_timeout(d.pop("on_timeout", UNSET))

        def _parse_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_seconds = _parse_timeout_seconds(d.pop("timeout_seconds", UNSET))

        approval_policy = cls(
            allow=allow,
            deny=deny,
            mode=mode,
            on_timeout=on_timeout,
            timeout_seconds=timeout_seconds,
        )

        return approval_policy
