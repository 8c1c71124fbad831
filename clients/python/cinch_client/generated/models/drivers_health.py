from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="DriversHealth")


@_attrs_define
class DriversHealth:
    """The drivers' state.

    Attributes:
        failed (list[str]): The plugins that did not load, by name (`cinch drivers` says why).
        loaded (list[str]): The drivers loaded, by name.
    """

    failed: list[str]
    loaded: list[str]
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        failed = self.failed

        loaded = self.loaded

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "failed": failed,
                "loaded": loaded,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        failed = cast(list[str], d.pop("failed"))

        loaded = cast(list[str], d.pop("loaded"))

        drivers_health = cls(
            failed=failed,
            loaded=loaded,
        )

        drivers_health.additional_properties = d
        return drivers_health

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
