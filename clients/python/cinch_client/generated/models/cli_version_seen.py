from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.unknown_event_seen import UnknownEventSeen


T = TypeVar("T", bound="CliVersionSeen")


@_attrs_define
class CliVersionSeen:
    """The unknown event types seen from one version of a harness's CLI.

    Attributes:
        unknown_events (list[UnknownEventSeen]): The types, by when each was first seen.
        cli_version (None | str | Unset): The CLI's version; null when it did not say it.
    """

    unknown_events: list[UnknownEventSeen]
    cli_version: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        unknown_events = []
        for unknown_events_item_data in self.unknown_events:
            unknown_events_item = unknown_events_item_data.to_dict()
            unknown_events.append(unknown_events_item)

        cli_version: None | str | Unset
        if isinstance(self.cli_version, Unset):
            cli_version = UNSET
        else:
            cli_version = self.cli_version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "unknown_events": unknown_events,
            }
        )
        if cli_version is not UNSET:
            field_dict["cli_version"] = cli_version

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.unknown_event_seen import UnknownEventSeen

        d = dict(src_dict)
        unknown_events = []
        _unknown_events = d.pop("unknown_events")
        for unknown_events_item_data in _unknown_events:
            unknown_events_item = UnknownEventSeen.from_dict(unknown_events_item_data)

            unknown_events.append(unknown_events_item)

        def _parse_cli_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cli_version = _parse_cli_version(d.pop("cli_version", UNSET))

        cli_version_seen = cls(
            unknown_events=unknown_events,
            cli_version=cli_version,
        )

        cli_version_seen.additional_properties = d
        return cli_version_seen

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
