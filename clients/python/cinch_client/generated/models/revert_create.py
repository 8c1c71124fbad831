from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="RevertCreate")


@_attrs_define
class RevertCreate:
    """A turn to revert.

    Attributes:
        turn_id (str): The turn: an assistant message's `turn.turn_id`, or a revert
            message's (which undoes that revert).
    """

    turn_id: str

    def to_dict(self) -> dict[str, Any]:
        turn_id = self.turn_id

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "turn_id": turn_id,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        turn_id = d.pop("turn_id")

        revert_create = cls(
            turn_id=turn_id,
        )

        return revert_create
