from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.driver_used import DriverUsed


T = TypeVar("T", bound="HarnessLog")


@_attrs_define
class HarnessLog:
    """A harness log as the spec returns it.

    Attributes:
        bytes_ (int): The whole log's size in bytes.
        events (int): Events the driver read from it.
        lines (list[str]): The log's events as progress lines, at most 2000, redacted, each cut at 240 characters.
        lines_truncated (bool): Whether there were more lines.
        raw (str): The raw JSONL, whole lines from the start within 256 KiB, redacted.
        raw_truncated (bool): Whether the raw log goes on past `raw`.
        unparsed (int): Lines that gave no event.
        driver (DriverUsed | None | Unset):
    """

    bytes_: int
    events: int
    lines: list[str]
    lines_truncated: bool
    raw: str
    raw_truncated: bool
    unparsed: int
    driver: DriverUsed | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.driver_used import DriverUsed

        bytes_ = self.bytes_

        events = self.events

        lines = self.lines

        lines_truncated = self.lines_truncated

        raw = self.raw

        raw_truncated = self.raw_truncated

        unparsed = self.unparsed

        driver: dict[str, Any] | None | Unset
        if isinstance(self.driver, Unset):
            driver = UNSET
        elif isinstance(self.driver, DriverUsed):
            driver = self.driver.to_dict()
        else:
            driver = self.driver

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "bytes": bytes_,
                "events": events,
                "lines": lines,
                "lines_truncated": lines_truncated,
                "raw": raw,
                "raw_truncated": raw_truncated,
                "unparsed": unparsed,
            }
        )
        if driver is not UNSET:
            field_dict["driver"] = driver

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.driver_used import DriverUsed

        d = dict(src_dict)
        bytes_ = d.pop("bytes")

        events = d.pop("events")

        lines = cast(list[str], d.pop("lines"))

        lines_truncated = d.pop("lines_truncated")

        raw = d.pop("raw")

        raw_truncated = d.pop("raw_truncated")

        unparsed = d.pop("unparsed")

        def _parse_driver(data: object) -> DriverUsed | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                driver_type_1 = DriverUsed.from_dict(data)

                return driver_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(DriverUsed | None | Unset, data)

        driver = _parse_driver(d.pop("driver", UNSET))

        harness_log = cls(
            bytes_=bytes_,
            events=events,
            lines=lines,
            lines_truncated=lines_truncated,
            raw=raw,
            raw_truncated=raw_truncated,
            unparsed=unparsed,
            driver=driver,
        )

        harness_log.additional_properties = d
        return harness_log

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
