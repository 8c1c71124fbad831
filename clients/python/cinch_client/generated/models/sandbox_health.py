from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SandboxHealth")


@_attrs_define
class SandboxHealth:
    """The sandbox's state.

    Attributes:
        enforced (bool): Turns run sandboxed; false only under `--no-sandbox`.
        landlock_abi (int): The kernel's Landlock ABI (0: none).
    """

    enforced: bool
    landlock_abi: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        enforced = self.enforced

        landlock_abi = self.landlock_abi

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "enforced": enforced,
                "landlock_abi": landlock_abi,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        enforced = d.pop("enforced")

        landlock_abi = d.pop("landlock_abi")

        sandbox_health = cls(
            enforced=enforced,
            landlock_abi=landlock_abi,
        )

        sandbox_health.additional_properties = d
        return sandbox_health

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
