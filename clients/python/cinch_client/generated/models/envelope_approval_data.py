from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.approval_status import ApprovalStatus, check_approval_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_option import ApprovalOption


T = TypeVar("T", bound="EnvelopeApprovalData")


@_attrs_define
class EnvelopeApprovalData:
    """An agent's permission request, waiting for or given a decision.

    Attributes:
        harness (str): The harness.
        id (str): Its id.
        kind (str): `shell`, `edit`, `read`, `fetch`, `mcp`, `other`, or `question`: the
            agent asks the user something (answered with `{"answer": "..."}`).
        options (list[ApprovalOption]): The choices the agent offered.
        requested_at (str): When the agent asked (RFC 3339).
        session_id (str): The session whose turn asked.
        status (ApprovalStatus): Where an approval stands.
        task_id (str): That session's task.
        title (str): One line saying what the tool would do.
        tool (str): The tool as the agent names it.
        turn_id (str): The turn that asked.
        answer (None | str | Unset): A question's answer, once answered.
        deadline (None | str | Unset): When its deadline decides it, while it is pending (RFC 3339).
        decided_at (None | str | Unset): When it was decided (RFC 3339).
        decided_by (None | str | Unset): Who decided: a member's or agent's id, `policy` or `timeout`.
        decision (None | str | Unset): `allow` or `deny`, once decided.
        input_ (None | str | Unset): The command, path or diff preview, the turn's secrets masked.
        message (None | str | Unset): The note given with the decision.
    """

    harness: str
    id: str
    kind: str
    options: list[ApprovalOption]
    requested_at: str
    session_id: str
    status: ApprovalStatus
    task_id: str
    title: str
    tool: str
    turn_id: str
    answer: None | str | Unset = UNSET
    deadline: None | str | Unset = UNSET
    decided_at: None | str | Unset = UNSET
    decided_by: None | str | Unset = UNSET
    decision: None | str | Unset = UNSET
    input_: None | str | Unset = UNSET
    message: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        harness = self.harness

        id = self.id

        kind = self.kind

        options = []
        for options_item_data in self.options:
            options_item = options_item_data.to_dict()
            options.append(options_item)

        requested_at = self.requested_at

        session_id = self.session_id

        status: str = self.status

        task_id = self.task_id

        title = self.title

        tool = self.tool

        turn_id = self.turn_id

        answer: None | str | Unset
        if isinstance(self.answer, Unset):
            answer = UNSET
        else:
            answer = self.answer

        deadline: None | str | Unset
        if isinstance(self.deadline, Unset):
            deadline = UNSET
        else:
            deadline = self.deadline

        decided_at: None | str | Unset
        if isinstance(self.decided_at, Unset):
            decided_at = UNSET
        else:
            decided_at = self.decided_at

        decided_by: None | str | Unset
        if isinstance(self.decided_by, Unset):
            decided_by = UNSET
        else:
            decided_by = self.decided_by

        decision: None | str | Unset
        if isinstance(self.decision, Unset):
            decision = UNSET
        else:
            decision = self.decision

        input_: None | str | Unset
        if isinstance(self.input_, Unset):
            input_ = UNSET
        else:
            input_ = self.input_

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "harness": harness,
                "id": id,
                "kind": kind,
                "options": options,
                "requested_at": requested_at,
                "session_id": session_id,
                "status": status,
                "task_id": task_id,
                "title": title,
                "tool": tool,
                "turn_id": turn_id,
            }
        )
        if answer is not UNSET:
            field_dict["answer"] = answer
        if deadline is not UNSET:
            field_dict["deadline"] = deadline
        if decided_at is not UNSET:
            field_dict["decided_at"] = decided_at
        if decided_by is not UNSET:
            field_dict["decided_by"] = decided_by
        if decision is not UNSET:
            field_dict["decision"] = decision
        if input_ is not UNSET:
            field_dict["input"] = input_
        if message is not UNSET:
            field_dict["message"] = message

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_option import ApprovalOption

        d = dict(src_dict)
        harness = d.pop("harness")

        id = d.pop("id")

        kind = d.pop("kind")

        options = []
        _options = d.pop("options")
        for options_item_data in _options:
            options_item = ApprovalOption.from_dict(options_item_data)

            options.append(options_item)

        requested_at = d.pop("requested_at")

        session_id = d.pop("session_id")

        status = check_approval_status(d.pop("status"))

        task_id = d.pop("task_id")

        title = d.pop("title")

        tool = d.pop("tool")

        turn_id = d.pop("turn_id")

        def _parse_answer(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        answer = _parse_answer(d.pop("answer", UNSET))

        def _parse_deadline(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        deadline = _parse_deadline(d.pop("deadline", UNSET))

        def _parse_decided_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decided_at = _parse_decided_at(d.pop("decided_at", UNSET))

        def _parse_decided_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decided_by = _parse_decided_by(d.pop("decided_by", UNSET))

        def _parse_decision(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        decision = _parse_decision(d.pop("decision", UNSET))

        def _parse_input_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        input_ = _parse_input_(d.pop("input", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        envelope_approval_data = cls(
            harness=harness,
            id=id,
            kind=kind,
            options=options,
            requested_at=requested_at,
            session_id=session_id,
            status=status,
            task_id=task_id,
            title=title,
            tool=tool,
            turn_id=turn_id,
            answer=answer,
            deadline=deadline,
            decided_at=decided_at,
            decided_by=decided_by,
            decision=decision,
            input_=input_,
            message=message,
        )

        envelope_approval_data.additional_properties = d
        return envelope_approval_data

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> Any:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
