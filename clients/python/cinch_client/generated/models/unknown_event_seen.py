from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UnknownEventSeen")


@_attrs_define
class UnknownEventSeen:
    """An event type a driver did not know.

    Attributes:
        count (int): How many such events turns on every account have seen since.
        first_seen (str): When a turn's end first recorded it (RFC 3339, UTC).
        type_ (str): The type's name (`(no type)` for JSON without one, `(other types)`
            for those past a turn's 32).
    """

    count: int
    first_seen: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        count = self.count

        first_seen = self.first_seen

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "count": count,
                "first_seen": first_seen,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        count = d.pop("count")

        first_seen = d.pop("first_seen")

        type_ = d.pop("type")

        unknown_event_seen = cls(
            count=count,
            first_seen=first_seen,
            type_=type_,
        )

        unknown_event_seen.additional_properties = d
        return unknown_event_seen

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
