from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="DriverAdd")


@_attrs_define
class DriverAdd:
    """A plugin to install from an OCI registry.

    Attributes:
        source (str): `oci://HOST[:PORT]/REPO:TAG` or `oci://HOST[:PORT]/REPO@sha256:DIGEST`.
        update (bool | Unset): Take what the source gives now even though it is not what it gave
            when the plugin was added (a tag that moved).
    """

    source: str
    update: bool | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        source = self.source

        update = self.update

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "source": source,
            }
        )
        if update is not UNSET:
            field_dict["update"] = update

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        source = d.pop("source")

        update = d.pop("update", UNSET)

        driver_add = cls(
            source=source,
            update=update,
        )

        return driver_add
