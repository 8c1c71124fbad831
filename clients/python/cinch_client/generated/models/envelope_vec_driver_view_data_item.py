from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.driver_source import DriverSource, check_driver_source
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cli_version_seen import CliVersionSeen
    from ..models.harness_cli_view import HarnessCliView


T = TypeVar("T", bound="EnvelopeVecDriverViewDataItem")


@_attrs_define
class EnvelopeVecDriverViewDataItem:
    """A driver the server has loaded.

    Attributes:
        cli_versions (list[CliVersionSeen]): Per CLI version its turns ran, the event types it did not know,
            oldest sighting first; empty when it has known every event.
        contract_version (str): The driver contract version it implements.
        digest (str): The component's digest, `sha256:HEX`: what a turn's result names.
        display_name (str): What people call it.
        harnesses (list[HarnessCliView]): The harnesses it runs (itself and its profiles): each one's CLI
            package, tested and pinned versions, and the CLI versions turns ran on.
        name (str): The harness, as a request's `harness` names it.
        program (str): The program it runs, looked up on the server's PATH.
        source (DriverSource): Where a driver comes from.
        origin (None | str | Unset): Where a pinned plugin came from: a file's path or an OCI reference;
            null for a built-in or an unpinned plugin file.
        version (None | str | Unset): Its version: a pinned plugin's (its OCI version or tag), cinch's for
            a built-in; null when unknown.
    """

    cli_versions: list[CliVersionSeen]
    contract_version: str
    digest: str
    display_name: str
    harnesses: list[HarnessCliView]
    name: str
    program: str
    source: DriverSource
    origin: None | str | Unset = UNSET
    version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cli_versions = []
        for cli_versions_item_data in self.cli_versions:
            cli_versions_item = cli_versions_item_data.to_dict()
            cli_versions.append(cli_versions_item)

        contract_version = self.contract_version

        digest = self.digest

        display_name = self.display_name

        harnesses = []
        for harnesses_item_data in self.harnesses:
            harnesses_item = harnesses_item_data.to_dict()
            harnesses.append(harnesses_item)

        name = self.name

        program = self.program

        source: str = self.source

        origin: None | str | Unset
        if isinstance(self.origin, Unset):
            origin = UNSET
        else:
            origin = self.origin

        version: None | str | Unset
        if isinstance(self.version, Unset):
            version = UNSET
        else:
            version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cli_versions": cli_versions,
                "contract_version": contract_version,
                "digest": digest,
                "display_name": display_name,
                "harnesses": harnesses,
                "name": name,
                "program": program,
                "source": source,
            }
        )
        if origin is not UNSET:
            field_dict["origin"] = origin
        if version is not UNSET:
            field_dict["version"] = version

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cli_version_seen import CliVersionSeen
        from ..models.harness_cli_view import HarnessCliView

        d = dict(src_dict)
        cli_versions = []
        _cli_versions = d.pop("cli_versions")
        for cli_versions_item_data in _cli_versions:
            cli_versions_item = CliVersionSeen.from_dict(cli_versions_item_data)

            cli_versions.append(cli_versions_item)

        contract_version = d.pop("contract_version")

        digest = d.pop("digest")

        display_name = d.pop("display_name")

        harnesses = []
        _harnesses = d.pop("harnesses")
        for harnesses_item_data in _harnesses:
            harnesses_item = HarnessCliView.from_dict(harnesses_item_data)

            harnesses.append(harnesses_item)

        name = d.pop("name")

        program = d.pop("program")

        source = check_driver_source(d.pop("source"))

        def _parse_origin(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        origin = _parse_origin(d.pop("origin", UNSET))

        def _parse_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        version = _parse_version(d.pop("version", UNSET))

        envelope_vec_driver_view_data_item = cls(
            cli_versions=cli_versions,
            contract_version=contract_version,
            digest=digest,
            display_name=display_name,
            harnesses=harnesses,
            name=name,
            program=program,
            source=source,
            origin=origin,
            version=version,
        )

        envelope_vec_driver_view_data_item.additional_properties = d
        return envelope_vec_driver_view_data_item

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
