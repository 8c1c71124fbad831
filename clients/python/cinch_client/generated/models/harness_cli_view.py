from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.cli_version_run import CliVersionRun


T = TypeVar("T", bound="HarnessCliView")


@_attrs_define
class HarnessCliView:
    """A harness's CLI: where it comes from, the versions its driver was tested
    with, the one pinned, and those turns ran on.

        Attributes:
            cli_versions_run (list[CliVersionRun]): The CLI versions its turns ran on, first seen first.
            name (str): The harness.
            package (None | str | Unset): Its package, `npm:NAME` or `pypi:NAME`; null when none is known.
            pinned_version (None | str | Unset): The version config.toml pins (`[harness.NAME] version`); null: the
                CLI on the server's PATH runs.
            tested_versions (None | str | Unset): The CLI versions its driver was tested with (a semver range); null
                when it states none.
    """

    cli_versions_run: list[CliVersionRun]
    name: str
    package: None | str | Unset = UNSET
    pinned_version: None | str | Unset = UNSET
    tested_versions: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cli_versions_run = []
        for cli_versions_run_item_data in self.cli_versions_run:
            cli_versions_run_item = cli_versions_run_item_data.to_dict()
            cli_versions_run.append(cli_versions_run_item)

        name = self.name

        package: None | str | Unset
        if isinstance(self.package, Unset):
            package = UNSET
        else:
            package = self.package

        pinned_version: None | str | Unset
        if isinstance(self.pinned_version, Unset):
            pinned_version = UNSET
        else:
            pinned_version = self.pinned_version

        tested_versions: None | str | Unset
        if isinstance(self.tested_versions, Unset):
            tested_versions = UNSET
        else:
            tested_versions = self.tested_versions

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cli_versions_run": cli_versions_run,
                "name": name,
            }
        )
        if package is not UNSET:
            field_dict["package"] = package
        if pinned_version is not UNSET:
            field_dict["pinned_version"] = pinned_version
        if tested_versions is not UNSET:
            field_dict["tested_versions"] = tested_versions

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.cli_version_run import CliVersionRun

        d = dict(src_dict)
        cli_versions_run = []
        _cli_versions_run = d.pop("cli_versions_run")
        for cli_versions_run_item_data in _cli_versions_run:
            cli_versions_run_item = CliVersionRun.from_dict(cli_versions_run_item_data)

            cli_versions_run.append(cli_versions_run_item)

        name = d.pop("name")

        def _parse_package(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        package = _parse_package(d.pop("package", UNSET))

        def _parse_pinned_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pinned_version = _parse_pinned_version(d.pop("pinned_version", UNSET))

        def _parse_tested_versions(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tested_versions = _parse_tested_versions(d.pop("tested_versions", UNSET))

        harness_cli_view = cls(
            cli_versions_run=cli_versions_run,
            name=name,
            package=package,
            pinned_version=pinned_version,
            tested_versions=tested_versions,
        )

        harness_cli_view.additional_properties = d
        return harness_cli_view

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
