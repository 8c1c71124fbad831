from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cli_drift import CliDrift, check_cli_drift
from ..types import UNSET, Unset

T = TypeVar("T", bound="CliVersionRun")


@_attrs_define
class CliVersionRun:
    """A CLI version turns of a harness ran on.

    Attributes:
        first_seen (str): When a turn on it first ended (RFC 3339, UTC).
        last_seen (str): When a turn on it last ended (RFC 3339, UTC).
        turns (int): How many turns ran on it.
        cli_version (None | str | Unset): The version; null when the CLI did not say it.
        drift (CliDrift | None | Unset):
    """

    first_seen: str
    last_seen: str
    turns: int
    cli_version: None | str | Unset = UNSET
    drift: CliDrift | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        first_seen = self.first_seen

        last_seen = self.last_seen

        turns = self.turns

        cli_version: None | str | Unset
        if isinstance(self.cli_version, Unset):
            cli_version = UNSET
        else:
            cli_version = self.cli_version

        drift: None | str | Unset
        if isinstance(self.drift, Unset):
            drift = UNSET
        elif isinstance(self.drift, str):
            drift = self.drift
        else:
            drift = self.drift

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "first_seen": first_seen,
                "last_seen": last_seen,
                "turns": turns,
            }
        )
        if cli_version is not UNSET:
            field_dict["cli_version"] = cli_version
        if drift is not UNSET:
            field_dict["drift"] = drift

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        first_seen = d.pop("first_seen")

        last_seen = d.pop("last_seen")

        turns = d.pop("turns")

        def _parse_cli_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cli_version = _parse_cli_version(d.pop("cli_version", UNSET))

        def _parse_drift(data: object) -> CliDrift | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                drift_type_1 = check_cli_drift(data)

                return drift_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CliDrift | None | Unset, data)

        drift = _parse_drift(d.pop("drift", UNSET))

        cli_version_run = cls(
            first_seen=first_seen,
            last_seen=last_seen,
            turns=turns,
            cli_version=cli_version,
            drift=drift,
        )

        cli_version_run.additional_properties = d
        return cli_version_run

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
