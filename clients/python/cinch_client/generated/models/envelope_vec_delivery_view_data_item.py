from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.delivery_state import DeliveryState, check_delivery_state
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.envelope_vec_delivery_view_data_item_payload import (
        EnvelopeVecDeliveryViewDataItemPayload,
    )


T = TypeVar("T", bound="EnvelopeVecDeliveryViewDataItem")


@_attrs_define
class EnvelopeVecDeliveryViewDataItem:
    """One event sent to one webhook, and how its attempts went.

    Attributes:
        attempts (int): Attempts made so far.
        created_at (str): When the event happened (RFC 3339).
        event (str): The event's type: `turn.ended` or `session.status_changed`.
        id (str): Its id (also sent as `X-Cinch-Delivery`).
        payload (EnvelopeVecDeliveryViewDataItemPayload): The body sent, as JSON.
        state (DeliveryState): Where a delivery stands.
        webhook_id (str): The webhook.
        delivered_at (None | str | Unset): When a receiver answered 2xx.
        last_error (None | str | Unset): Why the last attempt failed, when it did.
        last_status (int | None | Unset): The last attempt's HTTP status, when the receiver answered.
        next_attempt_at (None | str | Unset): When the next attempt is due, while pending.
    """

    attempts: int
    created_at: str
    event: str
    id: str
    payload: EnvelopeVecDeliveryViewDataItemPayload
    state: DeliveryState
    webhook_id: str
    delivered_at: None | str | Unset = UNSET
    last_error: None | str | Unset = UNSET
    last_status: int | None | Unset = UNSET
    next_attempt_at: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        attempts = self.attempts

        created_at = self.created_at

        event = self.event

        id = self.id

        payload = self.payload.to_dict()

        state: str = self.state

        webhook_id = self.webhook_id

        delivered_at: None | str | Unset
        if isinstance(self.delivered_at, Unset):
            delivered_at = UNSET
        else:
            delivered_at = self.delivered_at

        last_error: None | str | Unset
        if isinstance(self.last_error, Unset):
            last_error = UNSET
        else:
            last_error = self.last_error

        last_status: int | None | Unset
        if isinstance(self.last_status, Unset):
            last_status = UNSET
        else:
            last_status = self.last_status

        next_attempt_at: None | str | Unset
        if isinstance(self.next_attempt_at, Unset):
            next_attempt_at = UNSET
        else:
            next_attempt_at = self.next_attempt_at

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "attempts": attempts,
                "created_at": created_at,
                "event": event,
                "id": id,
                "payload": payload,
                "state": state,
                "webhook_id": webhook_id,
            }
        )
        if delivered_at is not UNSET:
            field_dict["delivered_at"] = delivered_at
        if last_error is not UNSET:
            field_dict["last_error"] = last_error
        if last_status is not UNSET:
            field_dict["last_status"] = last_status
        if next_attempt_at is not UNSET:
            field_dict["next_attempt_at"] = next_attempt_at

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.envelope_vec_delivery_view_data_item_payload import (
            EnvelopeVecDeliveryViewDataItemPayload,
        )

        d = dict(src_dict)
        attempts = d.pop("attempts")

        created_at = d.pop("created_at")

        event = d.pop("event")

        id = d.pop("id")

        payload = EnvelopeVecDeliveryViewDataItemPayload.from_dict(d.pop("payload"))

        state = check_delivery_state(d.pop("state"))

        webhook_id = d.pop("webhook_id")

        def _parse_delivered_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        delivered_at = _parse_delivered_at(d.pop("delivered_at", UNSET))

        def _parse_last_error(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_error = _parse_last_error(d.pop("last_error", UNSET))

        def _parse_last_status(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        last_status = _parse_last_status(d.pop("last_status", UNSET))

        def _parse_next_attempt_at(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        next_attempt_at = _parse_next_attempt_at(d.pop("next_attempt_at", UNSET))

        envelope_vec_delivery_view_data_item = cls(
            attempts=attempts,
            created_at=created_at,
            event=event,
            id=id,
            payload=payload,
            state=state,
            webhook_id=webhook_id,
            delivered_at=delivered_at,
            last_error=last_error,
            last_status=last_status,
            next_attempt_at=next_attempt_at,
        )

        envelope_vec_delivery_view_data_item.additional_properties = d
        return envelope_vec_delivery_view_data_item

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
