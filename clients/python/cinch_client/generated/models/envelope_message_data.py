from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.message_kind import MessageKind, check_message_kind
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.envelope_message_data_forked_from_type_0 import (
        EnvelopeMessageDataForkedFromType0,
    )
    from ..models.envelope_message_data_turn_type_0 import EnvelopeMessageDataTurnType0


T = TypeVar("T", bound="EnvelopeMessageData")


@_attrs_define
class EnvelopeMessageData:
    """A message.

    Attributes:
        content (str): Its text.
        created_at (str): When it was created (RFC 3339).
        id (str): Its id.
        session_id (str): Its session.
        task_id (str): Its session's task.
        type_ (MessageKind): What a message is, stored as its kebab-case name.
        forked_from (EnvelopeMessageDataForkedFromType0 | None | Unset): For a message a fork inherited from its source:
            the fork point,
            `{"session_id", "turn_id"}`; null for the session's own messages.
        sequence (int | None | Unset): Its place in the conversation; null while it is queued.
        turn (EnvelopeMessageDataTurnType0 | None | Unset): An assistant message's turn: its call, status and, once
            ended, result.
            Kept as stored text: listing messages copies it out without parsing it.
    """

    content: str
    created_at: str
    id: str
    session_id: str
    task_id: str
    type_: MessageKind
    forked_from: EnvelopeMessageDataForkedFromType0 | None | Unset = UNSET
    sequence: int | None | Unset = UNSET
    turn: EnvelopeMessageDataTurnType0 | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.envelope_message_data_forked_from_type_0 import (
            EnvelopeMessageDataForkedFromType0,
        )
        from ..models.envelope_message_data_turn_type_0 import (
            EnvelopeMessageDataTurnType0,
        )

        content = self.content

        created_at = self.created_at

        id = self.id

        session_id = self.session_id

        task_id = self.task_id

        type_: str = self.type_

        forked_from: dict[str, Any] | None | Unset
        if isinstance(self.forked_from, Unset):
            forked_from = UNSET
        elif isinstance(self.forked_from, EnvelopeMessageDataForkedFromType0):
            forked_from = self.forked_from.to_dict()
        else:
            forked_from = self.forked_from

        sequence: int | None | Unset
        if isinstance(self.sequence, Unset):
            sequence = UNSET
        else:
            sequence = self.sequence

        turn: dict[str, Any] | None | Unset
        if isinstance(self.turn, Unset):
            turn = UNSET
        elif isinstance(self.turn, EnvelopeMessageDataTurnType0):
            turn = self.turn.to_dict()
        else:
            turn = self.turn

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "content": content,
                "created_at": created_at,
                "id": id,
                "session_id": session_id,
                "task_id": task_id,
                "type": type_,
            }
        )
        if forked_from is not UNSET:
            field_dict["forked_from"] = forked_from
        if sequence is not UNSET:
            field_dict["sequence"] = sequence
        if turn is not UNSET:
            field_dict["turn"] = turn

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.envelope_message_data_forked_from_type_0 import (
            EnvelopeMessageDataForkedFromType0,
        )
        from ..models.envelope_message_data_turn_type_0 import (
            EnvelopeMessageDataTurnType0,
        )

        d = dict(src_dict)
        content = d.pop("content")

        created_at = d.pop("created_at")

        id = d.pop("id")

        session_id = d.pop("session_id")

        task_id = d.pop("task_id")

        type_ = check_message_kind(d.pop("type"))

        def _parse_forked_from(
            data: object,
        ) -> EnvelopeMessageDataForkedFromType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                forked_from_type_0 = EnvelopeMessageDataForkedFromType0.from_dict(data)

                return forked_from_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnvelopeMessageDataForkedFromType0 | None | Unset, data)

        forked_from = _parse_forked_from(d.pop("forked_from", UNSET))

        def _parse_sequence(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        sequence = _parse_sequence(d.pop("sequence", UNSET))

        def _parse_turn(data: object) -> EnvelopeMessageDataTurnType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                turn_type_0 = EnvelopeMessageDataTurnType0.from_dict(data)

                return turn_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(EnvelopeMessageDataTurnType0 | None | Unset, data)

        turn = _parse_turn(d.pop("turn", UNSET))

        envelope_message_data = cls(
            content=content,
            created_at=created_at,
            id=id,
            session_id=session_id,
            task_id=task_id,
            type_=type_,
            forked_from=forked_from,
            sequence=sequence,
            turn=turn,
        )

        envelope_message_data.additional_properties = d
        return envelope_message_data

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
