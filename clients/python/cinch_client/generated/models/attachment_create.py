from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="AttachmentCreate")


@_attrs_define
class AttachmentCreate:
    """An attachment to add: an MCP resource with inline `text` or base64
    `blob` (at most 512 KiB of content); one without content is kept as `failed`.

        Attributes:
            name (str): Its name: not blank.
            blob (None | str | Unset): Base64 content, standard alphabet, padded (not with `text`): at most 512 KiB decoded.
            mime_type (None | str | Unset): Its media type.
            text (None | str | Unset): Inline text (not with `blob`): at most 524288 characters.
            uri (None | str | Unset): Where it came from; never fetched.
    """

    name: str
    blob: None | str | Unset = UNSET
    mime_type: None | str | Unset = UNSET
    text: None | str | Unset = UNSET
    uri: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

        blob: None | str | Unset
        if isinstance(self.blob, Unset):
            blob = UNSET
        else:
            blob = self.blob

        mime_type: None | str | Unset
        if isinstance(self.mime_type, Unset):
            mime_type = UNSET
        else:
            mime_type = self.mime_type

        text: None | str | Unset
        if isinstance(self.text, Unset):
            text = UNSET
        else:
            text = self.text

        uri: None | str | Unset
        if isinstance(self.uri, Unset):
            uri = UNSET
        else:
            uri = self.uri

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "name": name,
            }
        )
        if blob is not UNSET:
            field_dict["blob"] = blob
        if mime_type is not UNSET:
            field_dict["mimeType"] = mime_type
        if text is not UNSET:
            field_dict["text"] = text
        if uri is not UNSET:
            field_dict["uri"] = uri

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        name = d.pop("name")

        def _parse_blob(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        blob = _parse_blob(d.pop("blob", UNSET))

        def _parse_mime_type(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        mime_type = _parse_mime_type(d.pop("mimeType", UNSET))

        def _parse_text(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        text = _parse_text(d.pop("text", UNSET))

        def _parse_uri(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        uri = _parse_uri(d.pop("uri", UNSET))

        attachment_create = cls(
            name=name,
            blob=blob,
            mime_type=mime_type,
            text=text,
            uri=uri,
        )

        return attachment_create
