from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="TaskResultUnknownEvents")


@_attrs_define
class TaskResultUnknownEvents:
    """Lines of valid JSON of a type the driver does not know, counted by
    type (`(no type)` for those without one): the sign that the CLI's
    output changed. Type names are cut at 64 characters, characters other
    than letters, digits and `_-./:@` shown as `?`; past 32 types per
    turn the rest count under `(other types)`.

    """

    additional_properties: dict[str, int] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        task_result_unknown_events = cls()

        task_result_unknown_events.additional_properties = d
        return task_result_unknown_events

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(self, key: str) -> int:
        return self.additional_properties[key]

    def __setitem__(self, key: str, value: int) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
