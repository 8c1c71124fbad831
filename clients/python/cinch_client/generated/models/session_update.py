from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..models.session_change import SessionChange, check_session_change

T = TypeVar("T", bound="SessionUpdate")


@_attrs_define
class SessionUpdate:
    """A change to a session: closing it is the one there is.

    Attributes:
        status (SessionChange): The status a session can be set to.
    """

    status: SessionChange

    def to_dict(self) -> dict[str, Any]:
        status: str = self.status

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "status": status,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        status = check_session_change(d.pop("status"))

        session_update = cls(
            status=status,
        )

        return session_update
