from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.disk_state import DiskState, check_disk_state
from ..types import UNSET, Unset

T = TypeVar("T", bound="DiskHealth")


@_attrs_define
class DiskHealth:
    """The disk of cinch's home, where turns, workspaces and (by default) the
    database are kept.

        Attributes:
            state (DiskState): How the disk stands.
            free_bytes (int | None | Unset): Bytes cinch may still write there; null when it could not be measured.
            total_bytes (int | None | Unset): Its size in bytes; null when it could not be measured.
    """

    state: DiskState
    free_bytes: int | None | Unset = UNSET
    total_bytes: int | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        state: str = self.state

        free_bytes: int | None | Unset
        if isinstance(self.free_bytes, Unset):
            free_bytes = UNSET
        else:
            free_bytes = self.free_bytes

        total_bytes: int | None | Unset
        if isinstance(self.total_bytes, Unset):
            total_bytes = UNSET
        else:
            total_bytes = self.total_bytes

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "state": state,
            }
        )
        if free_bytes is not UNSET:
            field_dict["free_bytes"] = free_bytes
        if total_bytes is not UNSET:
            field_dict["total_bytes"] = total_bytes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        state = check_disk_state(d.pop("state"))

        def _parse_free_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        free_bytes = _parse_free_bytes(d.pop("free_bytes", UNSET))

        def _parse_total_bytes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        total_bytes = _parse_total_bytes(d.pop("total_bytes", UNSET))

        disk_health = cls(
            state=state,
            free_bytes=free_bytes,
            total_bytes=total_bytes,
        )

        disk_health.additional_properties = d
        return disk_health

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
