from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

if TYPE_CHECKING:
    from ..models.field_error import FieldError


T = TypeVar("T", bound="Problem")


@_attrs_define
class Problem:
    """An error answer.

    Attributes:
        detail (str): What went wrong this time.
        errors (list[FieldError]): The fields at fault, when the request's content is.
        status (int): The HTTP status.
        title (str): A short summary of the kind.
        type_ (str): What kind of problem: `urn:cinch:<code>`.
    """

    detail: str
    errors: list[FieldError]
    status: int
    title: str
    type_: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        detail = self.detail

        errors = []
        for errors_item_data in self.errors:
            errors_item = errors_item_data.to_dict()
            errors.append(errors_item)

        status = self.status

        title = self.title

        type_ = self.type_

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "detail": detail,
                "errors": errors,
                "status": status,
                "title": title,
                "type": type_,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.field_error import FieldError

        d = dict(src_dict)
        detail = d.pop("detail")

        errors = []
        _errors = d.pop("errors")
        for errors_item_data in _errors:
            errors_item = FieldError.from_dict(errors_item_data)

            errors.append(errors_item)

        status = d.pop("status")

        title = d.pop("title")

        type_ = d.pop("type")

        problem = cls(
            detail=detail,
            errors=errors,
            status=status,
            title=title,
            type_=type_,
        )

        problem.additional_properties = d
        return problem

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
