from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="ForkCreate")


@_attrs_define
class ForkCreate:
    """A fork to make; every field is optional.

    Attributes:
        effort (None | str | Unset): An effort in the harness's vocabulary (defaults as `model`).
        harness (None | str | Unset): The harness (default the source's): another harness is allowed.
        message (None | str | Unset): A message that starts the fork's first turn at once.
        model (None | str | Unset): A model id as `GET /v1/models` lists it (default the source's on
            the same harness, else the harness's default).
        turn_id (None | str | Unset): The turn to fork at: an assistant message's `turn.turn_id` (or a
            revert's); default the session's latest turn that ended.
    """

    effort: None | str | Unset = UNSET
    harness: None | str | Unset = UNSET
    message: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    turn_id: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        effort: None | str | Unset
        if isinstance(self.effort, Unset):
            effort = UNSET
        else:
            effort = self.effort

        harness: None | str | Unset
        if isinstance(self.harness, Unset):
            harness = UNSET
        else:
            harness = self.harness

        message: None | str | Unset
        if isinstance(self.message, Unset):
            message = UNSET
        else:
            message = self.message

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        turn_id: None | str | Unset
        if isinstance(self.turn_id, Unset):
            turn_id = UNSET
        else:
            turn_id = self.turn_id

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if effort is not UNSET:
            field_dict["effort"] = effort
        if harness is not UNSET:
            field_dict["harness"] = harness
        if message is not UNSET:
            field_dict["message"] = message
        if model is not UNSET:
            field_dict["model"] = model
        if turn_id is not UNSET:
            field_dict["turn_id"] = turn_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)

        def _parse_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        effort = _parse_effort(d.pop("effort", UNSET))

        def _parse_harness(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness = _parse_harness(d.pop("harness", UNSET))

        def _parse_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        message = _parse_message(d.pop("message", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_turn_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        turn_id = _parse_turn_id(d.pop("turn_id", UNSET))

        fork_create = cls(
            effort=effort,
            harness=harness,
            message=message,
            model=model,
            turn_id=turn_id,
        )

        return fork_create
