from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.usage_totals import UsageTotals


T = TypeVar("T", bound="EnvelopeVecAccountDataItem")


@_attrs_define
class EnvelopeVecAccountDataItem:
    """An account: everything else belongs to one.

    Attributes:
        created_at (str): When it was created (RFC 3339).
        id (str): Its id.
        name (str): Its name.
        usage (None | Unset | UsageTotals):
    """

    created_at: str
    id: str
    name: str
    usage: None | Unset | UsageTotals = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.usage_totals import UsageTotals

        created_at = self.created_at

        id = self.id

        name = self.name

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, UsageTotals):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "name": name,
            }
        )
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.usage_totals import UsageTotals

        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        name = d.pop("name")

        def _parse_usage(data: object) -> None | Unset | UsageTotals:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_1 = UsageTotals.from_dict(data)

                return usage_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | Unset | UsageTotals, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        envelope_vec_account_data_item = cls(
            created_at=created_at,
            id=id,
            name=name,
            usage=usage,
        )

        envelope_vec_account_data_item.additional_properties = d
        return envelope_vec_account_data_item

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
