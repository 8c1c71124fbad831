from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.decision import Decision, check_decision
from ..models.decision_scope import DecisionScope, check_decision_scope
from ..types import UNSET, Unset

T = TypeVar("T", bound="DecisionBody")


@_attrs_define
class DecisionBody:
    """A decision on an approval.

    Attributes:
        decision (Decision): A decision on one request.
        message (None | str | Unset): A note, recorded with the decision in the session's conversation.
        scope (DecisionScope | Unset): How long a decision applies to the session beyond its request.
    """

    decision: Decision
    message: None | str | Unset = UNSET
    scope: DecisionScope | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        decision: str = self.decision

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        scope: str | Unset = UNSET
        if not isinstance(self.scope, Unset):
            scope = self.scope

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "decision": decision,
            }
        )
        if message is not UNSET:
            field_dict["message"] = message
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        decision = check_decision(d.pop("decision"))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        _scope = d.pop("scope", UNSET)
        scope: DecisionScope | Unset
        if isinstance(_scope, Unset):
            scope = UNSET
        else:
            scope = check_decision_scope(_scope)

        decision_body = cls(
            decision=decision,
            message=message,
            scope=scope,
        )

        return decision_body
