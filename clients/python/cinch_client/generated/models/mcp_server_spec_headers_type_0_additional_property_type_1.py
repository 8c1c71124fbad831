from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="McpServerSpecHeadersType0AdditionalPropertyType1")


@_attrs_define
class McpServerSpecHeadersType0AdditionalPropertyType1:
    """
    Attributes:
        secret (str): the name of one of the environment's secrets
    """

    secret: str

    def to_dict(self) -> dict[str, Any]:
        secret = self.secret

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "secret": secret,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        secret = d.pop("secret")

        mcp_server_spec_headers_type_0_additional_property_type_1 = cls(
            secret=secret,
        )

        return mcp_server_spec_headers_type_0_additional_property_type_1
