from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define

T = TypeVar("T", bound="WebhookCreate")


@_attrs_define
class WebhookCreate:
    """A new webhook.

    Attributes:
        secret (str): The key of each delivery's `X-Cinch-Signature` (HMAC-SHA256 over
            `<timestamp>.<body>`), 16 to 256 characters. Write-only.
        url (str): An http:// or https:// URL. Loopback and private addresses are
            refused unless the server allows them.
    """

    secret: str
    url: str

    def to_dict(self) -> dict[str, Any]:
        secret = self.secret

        url = self.url

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "secret": secret,
                "url": url,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        secret = d.pop("secret")

        url = d.pop("url")

        webhook_create = cls(
            secret=secret,
            url=url,
        )

        return webhook_create
