from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.agent_change_harness_type_1 import (
    AgentChangeHarnessType1,
    check_agent_change_harness_type_1,
)
from ..models.agent_change_harness_type_2_type_1 import (
    AgentChangeHarnessType2Type1,
    check_agent_change_harness_type_2_type_1,
)
from ..models.agent_change_harness_type_3_type_1 import (
    AgentChangeHarnessType3Type1,
    check_agent_change_harness_type_3_type_1,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentChange")


@_attrs_define
class AgentChange:
    """An agent's settings to set; absent ones stay, null clears one.

    Attributes:
        effort (None | str | Unset): Its pinned effort, in its harness's vocabulary; it applies only when
            a task runs on that harness.
        enabled (bool | None | Unset): Whether it may run tasks.
        environment_id (None | str | Unset): Its default environment.
        harness (AgentChangeHarnessType1 | AgentChangeHarnessType2Type1 | AgentChangeHarnessType3Type1 | None | Unset):
            Its default harness: a driver's name, as `GET /v1/models` lists them.
        model (None | str | Unset): Its default model, as `GET /v1/models` lists it.
    """

    effort: None | str | Unset = UNSET
    enabled: bool | None | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    harness: (
        AgentChangeHarnessType1
        | AgentChangeHarnessType2Type1
        | AgentChangeHarnessType3Type1
        | None
        | Unset
    ) = UNSET
    model: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        effort: None | str | Unset
        if isinstance(self.effort, Unset):
            effort = UNSET
        else:
            effort = self.effort

        enabled: bool | None | Unset
        if isinstance(self.enabled, Unset):
            enabled = UNSET
        else:
            enabled = self.enabled

        environment_id: None | str | Unset
        if isinstance(self.environment_id, Unset):
            environment_id = UNSET
        else:
            environment_id = self.environment_id

        harness: None | str | Unset
        if isinstance(self.harness, Unset):
            harness = UNSET
        elif (
            isinstance(self.harness, str)
            or isinstance(self.harness, str)
            or isinstance(self.harness, str)
        ):
            harness = self.harness
        else:
            harness = self.harness

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if effort is not UNSET:
            field_dict["effort"] = effort
        if enabled is not UNSET:
            field_dict["enabled"] = enabled
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

        def _parse_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        effort = _parse_effort(d.pop("effort", UNSET))

        def _parse_enabled(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        enabled = _parse_enabled(d.pop("enabled", UNSET))

        def _parse_environment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        environment_id = _parse_environment_id(d.pop("environment_id", UNSET))

        def _parse_harness(
            data: object,
        ) -> (
            AgentChangeHarnessType1
            | AgentChangeHarnessType2Type1
            | AgentChangeHarnessType3Type1
            | None
            | Unset
        ):
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                harness_type_1 = check_agent_change_harness_type_1(data)

                return harness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                harness_type_2_type_1 = check_agent_change_harness_type_2_type_1(data)

                return harness_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                harness_type_3_type_1 = check_agent_change_harness_type_3_type_1(data)

                return harness_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                AgentChangeHarnessType1
                | AgentChangeHarnessType2Type1
                | AgentChangeHarnessType3Type1
                | None
                | Unset,
                data,
            )

        harness = _parse_harness(d.pop("harness", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        agent_change = cls(
            effort=effort,
            enabled=enabled,
            environment_id=environment_id,
            harness=harness,
            model=model,
        )

        return agent_change
