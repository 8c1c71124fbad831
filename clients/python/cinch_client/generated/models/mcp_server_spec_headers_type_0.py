from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.mcp_server_spec_headers_type_0_additional_property_type_1 import (
        McpServerSpecHeadersType0AdditionalPropertyType1,
    )


T = TypeVar("T", bound="McpServerSpecHeadersType0")


@_attrs_define
class McpServerSpecHeadersType0:
    additional_properties: dict[
        str, McpServerSpecHeadersType0AdditionalPropertyType1 | str
    ] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.mcp_server_spec_headers_type_0_additional_property_type_1 import (
            McpServerSpecHeadersType0AdditionalPropertyType1,
        )

        field_dict: dict[str, Any] = {}
        for prop_name, prop in self.additional_properties.items():
            if isinstance(prop, McpServerSpecHeadersType0AdditionalPropertyType1):
                field_dict[prop_name] = prop.to_dict()
            else:
                field_dict[prop_name] = prop

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.mcp_server_spec_headers_type_0_additional_property_type_1 import (
            McpServerSpecHeadersType0AdditionalPropertyType1,
        )

        d = dict(src_dict)
        mcp_server_spec_headers_type_0 = cls()

        additional_properties = {}
        for prop_name, prop_dict in d.items():

            def _parse_additional_property(
                data: object,
            ) -> McpServerSpecHeadersType0AdditionalPropertyType1 | str:
                try:
                    if not isinstance(data, dict):
                        raise TypeError()
                    additional_property_type_1 = (
                        McpServerSpecHeadersType0AdditionalPropertyType1.from_dict(data)
                    )

                    return additional_property_type_1
                except (TypeError, ValueError, AttributeError, KeyError):
                    pass
                return cast(
                    McpServerSpecHeadersType0AdditionalPropertyType1 | str, data
                )

            additional_property = _parse_additional_property(prop_dict)

            additional_properties[prop_name] = additional_property

        mcp_server_spec_headers_type_0.additional_properties = additional_properties
        return mcp_server_spec_headers_type_0

    @property
    def additional_keys(self) -> list[str]:
        return list(self.additional_properties.keys())

    def __getitem__(
        self, key: str
    ) -> McpServerSpecHeadersType0AdditionalPropertyType1 | str:
        return self.additional_properties[key]

    def __setitem__(
        self, key: str, value: McpServerSpecHeadersType0AdditionalPropertyType1 | str
    ) -> None:
        self.additional_properties[key] = value

    def __delitem__(self, key: str) -> None:
        del self.additional_properties[key]

    def __contains__(self, key: str) -> bool:
        return key in self.additional_properties
