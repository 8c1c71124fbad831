from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="CommitCreate")


@_attrs_define
class CommitCreate:
    """A commit of the session's work tree.

    Attributes:
        message (str): The commit message: not blank, at most 10,000 characters.
    """

    message: str

    def to_dict(self) -> dict[str, Any]:
        message = self.message

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        message = d.pop("message")

        commit_create = cls(
            message=message,
        )

        return commit_create
