from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.sandbox_view import SandboxView
    from ..models.server_view_pinned_clis import ServerViewPinnedClis


T = TypeVar("T", bound="ServerView")


@_attrs_define
class ServerView:
    """The server.

    Attributes:
        pinned_clis (ServerViewPinnedClis): The CLI versions config.toml pins, by harness (`[harness.NAME]
            version`): installed under cinch's home and run instead of PATH's.
        sandbox (SandboxView): How tenants' processes are contained.
        version (str): cinch's version.
    """

    pinned_clis: ServerViewPinnedClis
    sandbox: SandboxView
    version: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        pinned_clis = self.pinned_clis.to_dict()

        sandbox = self.sandbox.to_dict()

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "pinned_clis": pinned_clis,
                "sandbox": sandbox,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.sandbox_view import SandboxView
        from ..models.server_view_pinned_clis import ServerViewPinnedClis

        d = dict(src_dict)
        pinned_clis = ServerViewPinnedClis.from_dict(d.pop("pinned_clis"))

        sandbox = SandboxView.from_dict(d.pop("sandbox"))

        version = d.pop("version")

        server_view = cls(
            pinned_clis=pinned_clis,
            sandbox=sandbox,
            version=version,
        )

        server_view.additional_properties = d
        return server_view

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
