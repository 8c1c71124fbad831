from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ForkedFrom")


@_attrs_define
class ForkedFrom:
    """Where a fork was forked from.

    Attributes:
        session_id (str): The source session.
        turn_id (str): Its turn the fork starts after: the fork's work tree is that turn's
            end checkpoint, its conversation the messages up to it.
    """

    session_id: str
    turn_id: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        session_id = self.session_id

        turn_id = self.turn_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "session_id": session_id,
                "turn_id": turn_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        session_id = d.pop("session_id")

        turn_id = d.pop("turn_id")

        forked_from = cls(
            session_id=session_id,
            turn_id=turn_id,
        )

        forked_from.additional_properties = d
        return forked_from

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
