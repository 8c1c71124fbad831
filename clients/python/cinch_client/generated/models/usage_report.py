from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.usage_group import UsageGroup, check_usage_group
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_row import UsageRow
    from ..models.usage_totals import UsageTotals


T = TypeVar("T", bound="UsageReport")


@_attrs_define
class UsageReport:
    """An account's usage over a range.

    Attributes:
        groups (list[UsageRow]): One row per harness, model or day, in key order; empty without `group_by`.
        totals (UsageTotals): The tokens and cost of some turns.
        from_ (None | str | Unset): The range's start as applied (stored form), when given.
        group_by (None | Unset | UsageGroup):
        to (None | str | Unset): The range's end as applied, when given.
    """

    groups: list[UsageRow]
    totals: UsageTotals
    from_: None | str | Unset = UNSET
    group_by: None | Unset | UsageGroup = UNSET
    to: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        groups = []
        for groups_item_data in self.groups:
            groups_item = groups_item_data.to_dict()
            groups.append(groups_item)

        totals = self.totals.to_dict()

        from_: None | str | Unset
        if isinstance(self.from_, Unset):
            from_ = UNSET
        else:
            from_ = self.from_

        group_by: None | str | Unset
        if isinstance(self.group_by, Unset):
            group_by = UNSET
        elif isinstance(self.group_by, str):
            group_by = self.group_by
        else:
            group_by = self.group_by

        to: None | str | Unset
        if isinstance(self.to, Unset):
            to = UNSET
        else:
            to = self.to

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "groups": groups,
                "totals": totals,
            }
        )
        if from_ is not UNSET:
            field_dict["from"] = from_
        if group_by is not UNSET:
            field_dict["group_by"] = group_by
        if to is not UNSET:
            field_dict["to"] = to

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_row import UsageRow
        from ..models.usage_totals import UsageTotals

        d = dict(src_dict)
        groups = []
        _groups = d.pop("groups")
        for groups_item_data in _groups:
            groups_item = UsageRow.from_dict(groups_item_data)

            groups.append(groups_item)

        totals = UsageTotals.from_dict(d.pop("totals"))

        def _parse_from_(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        from_ = _parse_from_(d.pop("from", UNSET))

        def _parse_group_by(data: object) -> None | Unset | UsageGroup:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                group_by_type_1 = check_usage_group(data)

                return group_by_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UsageGroup, data)

        group_by = _parse_group_by(d.pop("group_by", UNSET))

        def _parse_to(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        to = _parse_to(d.pop("to", UNSET))

        usage_report = cls(
            groups=groups,
            totals=totals,
            from_=from_,
            group_by=group_by,
            to=to,
        )

        usage_report.additional_properties = d
        return usage_report

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
