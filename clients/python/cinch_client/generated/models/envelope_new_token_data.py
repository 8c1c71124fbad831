from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.token_owner_kind import TokenOwnerKind, check_token_owner_kind
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnvelopeNewTokenData")


@_attrs_define
class EnvelopeNewTokenData:
    """A new token, with its text: the only time it is shown.

    Attributes:
        created_at (str): When it was made (RFC 3339).
        id (str): Its id: `tok_` and 16 hex digits.
        owner_id (str): That member's or agent's id.
        owner_kind (TokenOwnerKind): Whom a token acts for.
        owner_name (str): That member's or agent's name.
        secret (str): Its text, for `Authorization: Bearer …`. Keep it now: cinch keeps
            only its hash and never shows it again.
        name (None | str | Unset): The name it was given when made ("CI", "laptop"), if any.
    """

    created_at: str
    id: str
    owner_id: str
    owner_kind: TokenOwnerKind
    owner_name: str
    secret: str
    name: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        owner_id = self.owner_id

        owner_kind: str = self.owner_kind

        owner_name = self.owner_name

        secret = self.secret

        name: None | str | Unset
        if isinstance(self.name, Unset):
            name = UNSET
        else:
            name = self.name

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "owner_id": owner_id,
                "owner_kind": owner_kind,
                "owner_name": owner_name,
                "secret": secret,
            }
        )
        if name is not UNSET:
            field_dict["name"] = name

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        owner_id = d.pop("owner_id")

        owner_kind = check_token_owner_kind(d.pop("owner_kind"))

        owner_name = d.pop("owner_name")

        secret = d.pop("secret")

        def _parse_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        name = _parse_name(d.pop("name", UNSET))

        envelope_new_token_data = cls(
            created_at=created_at,
            id=id,
            owner_id=owner_id,
            owner_kind=owner_kind,
            owner_name=owner_name,
            secret=secret,
            name=name,
        )

        envelope_new_token_data.additional_properties = d
        return envelope_new_token_data

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
