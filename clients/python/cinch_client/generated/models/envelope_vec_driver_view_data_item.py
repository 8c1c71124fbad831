from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.driver_source import DriverSource, check_driver_source

if TYPE_CHECKING:
    from ..models.cli_version_seen import CliVersionSeen


T = TypeVar("T", bound="EnvelopeVecDriverViewDataItem")


@_attrs_define
class EnvelopeVecDriverViewDataItem:
    """A driver the server has loaded.

    Attributes:
        cli_versions (list[CliVersionSeen]): Per CLI version its turns ran, the event types it did not know,
            oldest sighting first; empty when it has known every event.
        contract_version (str): The driver contract version it implements.
        display_name (str): What people call it.
        name (str): The harness, as a request's `harness` names it.
        program (str): The program it runs, looked up on the server's PATH.
        source (DriverSource): Where a driver comes from.
    """

    cli_versions: list[CliVersionSeen]
    contract_version: str
    display_name: str
    name: str
    program: str
    source: DriverSource
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cli_versions = []
        for cli_versions_item_data in self.cli_versions:
            cli_versions_item = cli_versions_item_data.to_dict()
            cli_versions.append(cli_versions_item)

        contract_version = self.contract_version

        display_name = self.display_name

        name = self.name

        program = self.program

        source: str = self.source

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cli_versions": cli_versions,
                "contract_version": contract_version,
                "display_name": display_name,
                "name": name,
                "program": program,
                "source": source,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cli_version_seen import CliVersionSeen

        d = dict(src_dict)
        cli_versions = []
        _cli_versions = d.pop("cli_versions")
        for cli_versions_item_data in _cli_versions:
            cli_versions_item = CliVersionSeen.from_dict(cli_versions_item_data)

            cli_versions.append(cli_versions_item)

        contract_version = d.pop("contract_version")

        display_name = d.pop("display_name")

        name = d.pop("name")

        program = d.pop("program")

        source = check_driver_source(d.pop("source"))

        envelope_vec_driver_view_data_item = cls(
            cli_versions=cli_versions,
            contract_version=contract_version,
            display_name=display_name,
            name=name,
            program=program,
            source=source,
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
