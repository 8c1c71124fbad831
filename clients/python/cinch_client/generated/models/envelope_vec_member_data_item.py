from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="EnvelopeVecMemberDataItem")


@_attrs_define
class EnvelopeVecMemberDataItem:
    """A person in an account.

    Attributes:
        account_id (str): The account it belongs to.
        created_at (str): When it was created (RFC 3339).
        id (str): Its id.
        name (str): Its name, unique in the account.
        role (str): `admin` or `member`.
    """

    account_id: str
    created_at: str
    id: str
    name: str
    role: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        created_at = self.created_at

        id = self.id

        name = self.name

        role = self.role

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "created_at": created_at,
                "id": id,
                "name": name,
                "role": role,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        id = d.pop("id")

        name = d.pop("name")

        role = d.pop("role")

        envelope_vec_member_data_item = cls(
            account_id=account_id,
            created_at=created_at,
            id=id,
            name=name,
            role=role,
        )

        envelope_vec_member_data_item.additional_properties = d
        return envelope_vec_member_data_item

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
