from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="PushCreate")


@_attrs_define
class PushCreate:
    """A push of the session's branch.

    Attributes:
        branch (None | str | Unset): Its name in the environment's repository (default: the session's
            `branch_name`): a git branch name.
    """

    branch: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        branch: None | str | Unset
        if isinstance(self.branch, Unset):
            branch = UNSET
        else:
            branch = self.branch

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if branch is not UNSET:
            field_dict["branch"] = branch

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch = _parse_branch(d.pop("branch", UNSET))

        push_create = cls(
            branch=branch,
        )

        return push_create
