from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.compared_session import ComparedSession


T = TypeVar("T", bound="EnvelopeComparisonData")


@_attrs_define
class EnvelopeComparisonData:
    """A task's sessions side by side.

    Attributes:
        differing_files (list[str]): The files whose content is not the same in every compared tree.
        sessions (list[ComparedSession]): Each session, oldest first.
        base (None | str | Unset): The commit every compared tree descends from.
    """

    differing_files: list[str]
    sessions: list[ComparedSession]
    base: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        differing_files = self.differing_files

        sessions = []
        for sessions_item_data in self.sessions:
            sessions_item = sessions_item_data.to_dict()
            sessions.append(sessions_item)

        base: None | str | Unset
        if isinstance(self.base, Unset):
            base = UNSET
        else:
            base = self.base

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "differing_files": differing_files,
                "sessions": sessions,
            }
        )
        if base is not UNSET:
            field_dict["base"] = base

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.compared_session import ComparedSession

        d = dict(src_dict)
        differing_files = cast(list[str], d.pop("differing_files"))

        sessions = []
        _sessions = d.pop("sessions")
        for sessions_item_data in _sessions:
            sessions_item = ComparedSession.from_dict(sessions_item_data)

            sessions.append(sessions_item)

        def _parse_base(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base = _parse_base(d.pop("base", UNSET))

        envelope_comparison_data = cls(
            differing_files=differing_files,
            sessions=sessions,
            base=base,
        )

        envelope_comparison_data.additional_properties = d
        return envelope_comparison_data

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
