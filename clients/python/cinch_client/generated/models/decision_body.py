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
    """A decision on an approval: `decision` (with `scope` and `message`) for a
    permission request, `answer` for a question (`kind: "question"`).

        Attributes:
            answer (None | str | Unset): The answer to a question.
            decision (Decision | None | Unset):
            message (None | str | Unset): A note, recorded with the decision in the session's conversation.
            scope (DecisionScope | None | Unset):
    """

    answer: None | str | Unset = UNSET
    decision: Decision | None | Unset = UNSET
    message: None | str | Unset = UNSET
    scope: DecisionScope | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        answer: None | str | Unset
        if isinstance(self.answer, Unset):
            answer = UNSET
        else:
            answer = self.answer

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        elif isinstance(self.decision, str):
            decision = self.decision
        else:
            decision = self.decision

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        scope: None | str | Unset
        if isinstance(self.scope, Unset):
            scope = UNSET
        elif isinstance(self.scope, str):
            scope = self.scope
        else:
            scope = self.scope

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if answer is not UNSET:
            field_dict["answer"] = answer
        if decision is not UNSET:
            field_dict["decision"] = decision
        if message is not UNSET:
            field_dict["message"] = message
        if scope is not UNSET:
            field_dict["scope"] = scope

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_answer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer = _parse_answer(d.pop("answer", UNSET))

        def _parse_decision(data: object) -> Decision | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                decision_type_1 = check_decision(data)

                return decision_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(Decision | None | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_scope(data: object) -> DecisionScope | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                scope_type_1 = check_decision_scope(data)

                return scope_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DecisionScope | None | Unset, data)

        scope = _parse_scope(d.pop("scope", UNSET))

        decision_body = cls(
            answer=answer,
            decision=decision,
            message=message,
            scope=scope,
        )

        return decision_body
