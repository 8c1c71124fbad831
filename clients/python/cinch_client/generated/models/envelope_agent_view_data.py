from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="EnvelopeAgentViewData")


@_attrs_define
class EnvelopeAgentViewData:
    """An agent with the size of its home directory.

    Attributes:
        account_id (str): The account it belongs to.
        connected (bool): Whether it is the account's connected agent (the default `created_by`).
        created_at (str): When it was created (RFC 3339).
        enabled (bool): Whether it may run tasks.
        id (str): Its id.
        name (str): Its name, unique in the account.
        home_bytes (int): Bytes in its home directory (its harnesses' `HOME`: their logins and
            session state); 0 before its first session.
        effort (None | str | Unset): Its pinned effort (applies to its own harness only).
        environment_id (None | str | Unset): Its default environment.
        harness (None | str | Unset): Its default harness.
        model (None | str | Unset): Its default model.
    """

    account_id: str
    connected: bool
    created_at: str
    enabled: bool
    id: str
    name: str
    home_bytes: int
    effort: None | str | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    harness: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        account_id = self.account_id

        connected = self.connected

        created_at = self.created_at

        enabled = self.enabled

        id = self.id

        name = self.name

        home_bytes = self.home_bytes

        effort: None | str | Unset
        if isinstance(self.effort, Unset):
            effort = UNSET
        else:
            effort = self.effort

        environment_id: None | str | Unset
        if isinstance(self.environment_id, Unset):
            environment_id = UNSET
        else:
            environment_id = self.environment_id

        harness: None | str | Unset
        if isinstance(self.harness, Unset):
            harness = UNSET
        else:
            harness = self.harness

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "connected": connected,
                "created_at": created_at,
                "enabled": enabled,
                "id": id,
                "name": name,
                "home_bytes": home_bytes,
            }
        )
        if effort is not UNSET:
            field_dict["effort"] = effort
        if environment_id is not UNSET:
            field_dict["environment_id"] = environment_id
        if harness is not UNSET:
            field_dict["harness"] = harness
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        account_id = d.pop("account_id")

        connected = d.pop("connected")

        created_at = d.pop("created_at")

        enabled = d.pop("enabled")

        id = d.pop("id")

        name = d.pop("name")

        home_bytes = d.pop("home_bytes")

        def _parse_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        effort = _parse_effort(d.pop("effort", UNSET))

        def _parse_environment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        environment_id = _parse_environment_id(d.pop("environment_id", UNSET))

        def _parse_harness(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness = _parse_harness(d.pop("harness", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        envelope_agent_view_data = cls(
            account_id=account_id,
            connected=connected,
            created_at=created_at,
            enabled=enabled,
            id=id,
            name=name,
            home_bytes=home_bytes,
            effort=effort,
            environment_id=environment_id,
            harness=harness,
            model=model,
        )

        envelope_agent_view_data.additional_properties = d
        return envelope_agent_view_data

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
