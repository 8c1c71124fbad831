from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

T = TypeVar("T", bound="FanOutSession")


@_attrs_define
class FanOutSession:
    """One session of a fan-out.

    Attributes:
        harness (str): `claude`, `codex`, ... as `GET /v1/models` lists them.
        effort (None | str | Unset): An effort in that harness's vocabulary.
        model (None | str | Unset): A model id of that harness.
    """

    harness: str
    effort: None | str | Unset = UNSET
    model: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        harness = self.harness

        effort: None | str | Unset
        if isinstance(self.effort, Unset):
            effort = UNSET
        else:
            effort = self.effort

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "harness": harness,
            }
        )
        if effort is not UNSET:
            field_dict["effort"] = effort
        if model is not UNSET:
            field_dict["model"] = model

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        harness = d.pop("harness")

        def _parse_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        effort = _parse_effort(d.pop("effort", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        fan_out_session = cls(
            harness=harness,
            effort=effort,
            model=model,
        )

        return fan_out_session
