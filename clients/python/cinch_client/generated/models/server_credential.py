from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.credential_source import CredentialSource, check_credential_source
from ..types import UNSET, Unset

T = TypeVar("T", bound="ServerCredential")


@_attrs_define
class ServerCredential:
    """Whether every server turn of a harness has a credential, whatever its
    environment, and how to give it one.

        Attributes:
            available (bool): Every turn of the harness has a credential from the server itself.
                When false, a turn has one only if its environment has a secret named
                in `variables`.
            how_to_add (list[str]): The ways to give its turns a credential, one sentence each.
            variables (list[str]): The variables the harness takes a key from, in its order of
                preference: an environment secret of one of these names gives its
                turns a credential.
            source (CredentialSource | None | Unset):
            variable (None | str | Unset): The variable that holds it, when it is a variable.
    """

    available: bool
    how_to_add: list[str]
    variables: list[str]
    source: CredentialSource | None | Unset = UNSET
    variable: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        available = self.available

        how_to_add = self.how_to_add

        variables = self.variables

        source: None | str | Unset
        if isinstance(self.source, Unset):
            source = UNSET
        elif isinstance(self.source, str):
            source = self.source
        else:
            source = self.source

        variable: None | str | Unset
        if isinstance(self.variable, Unset):
            variable = UNSET
        else:
            variable = self.variable

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "available": available,
                "how_to_add": how_to_add,
                "variables": variables,
            }
        )
        if source is not UNSET:
            field_dict["source"] = source
        if variable is not UNSET:
            field_dict["variable"] = variable

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        available = d.pop("available")

        how_to_add = cast(list[str], d.pop("how_to_add"))

        variables = cast(list[str], d.pop("variables"))

        def _parse_source(data: object) -> CredentialSource | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                source_type_1 = check_credential_source(data)

                return source_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CredentialSource | None | Unset, data)

        source = _parse_source(d.pop("source", UNSET))

        def _parse_variable(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        variable = _parse_variable(d.pop("variable", UNSET))

        server_credential = cls(
            available=available,
            how_to_add=how_to_add,
            variables=variables,
            source=source,
            variable=variable,
        )

        server_credential.additional_properties = d
        return server_credential

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
