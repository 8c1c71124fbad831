from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="TaskNote")


@_attrs_define
class TaskNote:
    """A note appended to the brief.

    Attributes:
        name (str): Its heading: not blank.
        text (str): Its content: not blank.
    """

    name: str
    text: str

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        text = self.text

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
                "text": text,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        text = d.pop("text")

        task_note = cls(
            name=name,
            text=text,
        )

        return task_note
