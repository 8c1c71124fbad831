from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnvelopeDriverPinnedData")


@_attrs_define
class EnvelopeDriverPinnedData:
    """A plugin as it is now pinned.

    Attributes:
        contract_version (str): The contract version it implements.
        digest (str): The component's digest, `sha256:HEX`.
        name (str): The driver's name.
        origin (str): Where it came from.
        unchanged (bool): Whether it was pinned to these very bytes already.
        replaced (None | str | Unset): The digest it replaced; null when it replaced no pin.
        version (None | str | Unset): Its version, when its source tells one.
    """

    contract_version: str
    digest: str
    name: str
    origin: str
    unchanged: bool
    replaced: None | str | Unset = UNSET
    version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        contract_version = self.contract_version

        digest = self.digest

        name = self.name

        origin = self.origin

        unchanged = self.unchanged

        replaced: None | str | Unset
        if isinstance(self.replaced, Unset):
            replaced = UNSET
        else:
            replaced = self.replaced

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "contract_version": contract_version,
                "digest": digest,
                "name": name,
                "origin": origin,
                "unchanged": unchanged,
            }
        )
        if replaced is not UNSET:
            field_dict["replaced"] = replaced
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        contract_version = d.pop("contract_version")

        digest = d.pop("digest")

        name = d.pop("name")

        origin = d.pop("origin")

        unchanged = d.pop("unchanged")

        def _parse_replaced(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        replaced = _parse_replaced(d.pop("replaced", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        envelope_driver_pinned_data = cls(
            contract_version=contract_version,
            digest=digest,
            name=name,
            origin=origin,
            unchanged=unchanged,
            replaced=replaced,
            version=version,
        )

        envelope_driver_pinned_data.additional_properties = d
        return envelope_driver_pinned_data

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
