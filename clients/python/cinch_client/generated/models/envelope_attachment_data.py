from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.attachment_status import AttachmentStatus, check_attachment_status
from ..types import UNSET, Unset

T = TypeVar("T", bound="EnvelopeAttachmentData")


@_attrs_define
class EnvelopeAttachmentData:
    """An attachment.

    Attributes:
        created_at (str): When it was created (RFC 3339).
        id (str): Its id.
        name (str): Its name.
        status (AttachmentStatus): Whether an attachment's content is available, stored as its snake_case
            name.
        task_id (str): Its task.
        error (None | str | Unset): Why it failed.
        mime_type (None | str | Unset): Its content's media type.
        uri (None | str | Unset): Where its content came from (a reference; never fetched).
    """

    created_at: str
    id: str
    name: str
    status: AttachmentStatus
    task_id: str
    error: None | str | Unset = UNSET
    mime_type: None | str | Unset = UNSET
    uri: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        created_at = self.created_at

        id = self.id

        name = self.name

        status: str = self.status

        task_id = self.task_id

        error: None | str | Unset
        if isinstance(self.error, Unset):
            error = UNSET
        else:
            error = self.error

        mime_type: None | str | Unset
        if isinstance(self.mime_type, Unset):
            mime_type = UNSET
        else:
            mime_type = self.mime_type

        uri: None | str | Unset
        if isinstance(self.uri, Unset):
            uri = UNSET
        else:
            uri = self.uri

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "created_at": created_at,
                "id": id,
                "name": name,
                "status": status,
                "task_id": task_id,
            }
        )
        if error is not UNSET:
            field_dict["error"] = error
        if mime_type is not UNSET:
            field_dict["mimeType"] = mime_type
        if uri is not UNSET:
            field_dict["uri"] = uri

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        created_at = d.pop("created_at")

        id = d.pop("id")

        name = d.pop("name")

        status = check_attachment_status(d.pop("status"))

        task_id = d.pop("task_id")

        def _parse_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error = _parse_error(d.pop("error", UNSET))

        def _parse_mime_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mime_type = _parse_mime_type(d.pop("mimeType", UNSET))

        def _parse_uri(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        uri = _parse_uri(d.pop("uri", UNSET))

        envelope_attachment_data = cls(
            created_at=created_at,
            id=id,
            name=name,
            status=status,
            task_id=task_id,
            error=error,
            mime_type=mime_type,
            uri=uri,
        )

        envelope_attachment_data.additional_properties = d
        return envelope_attachment_data

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
