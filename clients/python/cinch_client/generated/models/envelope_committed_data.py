from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EnvelopeCommittedData")


@_attrs_define
class EnvelopeCommittedData:
    """A commit made on a session's branch.

    Attributes:
        branch (str): The branch it is on.
        commit (str): Its id (the full hex sha).
        message (str): Its message.
    """

    branch: str
    commit: str
    message: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        branch = self.branch

        commit = self.commit

        message = self.message

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "branch": branch,
                "commit": commit,
                "message": message,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        branch = d.pop("branch")

        commit = d.pop("commit")

        message = d.pop("message")

        envelope_committed_data = cls(
            branch=branch,
            commit=commit,
            message=message,
        )

        envelope_committed_data.additional_properties = d
        return envelope_committed_data

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
