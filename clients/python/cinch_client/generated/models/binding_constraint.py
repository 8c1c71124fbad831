from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="BindingConstraint")


@_attrs_define
class BindingConstraint:
    """A task's binding constraint while one of its sessions waits for capacity.

    Attributes:
        kind (str): Always `retrying`.
        next_retry_seconds (int): Seconds until the next attempt.
        retries (int): Attempts so far.
    """

    kind: str
    next_retry_seconds: int
    retries: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        kind = self.kind

        next_retry_seconds = self.next_retry_seconds

        retries = self.retries

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "kind": kind,
                "next_retry_seconds": next_retry_seconds,
                "retries": retries,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        kind = d.pop("kind")

        next_retry_seconds = d.pop("next_retry_seconds")

        retries = d.pop("retries")

        binding_constraint = cls(
            kind=kind,
            next_retry_seconds=next_retry_seconds,
            retries=retries,
        )

        binding_constraint.additional_properties = d
        return binding_constraint

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
