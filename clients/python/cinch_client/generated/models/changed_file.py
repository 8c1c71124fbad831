from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="ChangedFile")


@_attrs_define
class ChangedFile:
    """A changed file.

    Attributes:
        binary (bool): Whether it is binary.
        deletions (int): Lines removed.
        insertions (int): Lines added.
        path (str): Its path in the repository.
    """

    binary: bool
    deletions: int
    insertions: int
    path: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        binary = self.binary

        deletions = self.deletions

        insertions = self.insertions

        path = self.path

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "binary": binary,
                "deletions": deletions,
                "insertions": insertions,
                "path": path,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        binary = d.pop("binary")

        deletions = d.pop("deletions")

        insertions = d.pop("insertions")

        path = d.pop("path")

        changed_file = cls(
            binary=binary,
            deletions=deletions,
            insertions=insertions,
            path=path,
        )

        changed_file.additional_properties = d
        return changed_file

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
