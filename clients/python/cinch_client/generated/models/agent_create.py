from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.agent_create_harness_type_1 import (
    AgentCreateHarnessType1,
    check_agent_create_harness_type_1,
)
from ..models.agent_create_harness_type_2_type_1 import (
    AgentCreateHarnessType2Type1,
    check_agent_create_harness_type_2_type_1,
)
from ..models.agent_create_harness_type_3_type_1 import (
    AgentCreateHarnessType3Type1,
    check_agent_create_harness_type_3_type_1,
)
from ..types import UNSET, Unset

T = TypeVar("T", bound="AgentCreate")


@_attrs_define
class AgentCreate:
    """A new agent: a `name` and, optionally, its settings as in [`AgentChange`].

    Attributes:
        name (str): Its name, unique in the account: not blank.
        effort (None | str | Unset): Its pinned effort.
        enabled (bool | None | Unset): Whether it may run tasks (default true).
        environment_id (None | str | Unset): Its default environment.
        harness (AgentCreateHarnessType1 | AgentCreateHarnessType2Type1 | AgentCreateHarnessType3Type1 | None | Unset):
            Its default harness.
        model (None | str | Unset): Its default model.
    """

    name: str
    effort: None | str | Unset = UNSET
    enabled: bool | None | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    harness: (
        AgentCreateHarnessType1
        | AgentCreateHarnessType2Type1
        | AgentCreateHarnessType3Type1
        | None
        | Unset
    ) = UNSET
    model: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        name = self.name

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

        field_dict.update(
            {
                "name": name,
            }
        )
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
        name = d.pop("name")

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
            AgentCreateHarnessType1
            | AgentCreateHarnessType2Type1
            | AgentCreateHarnessType3Type1
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
                harness_type_1 = check_agent_create_harness_type_1(data)

                return harness_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                harness_type_2_type_1 = check_agent_create_harness_type_2_type_1(data)

                return harness_type_2_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            try:
                if not isinstance(data, str):
                    raise TypeError()
                harness_type_3_type_1 = check_agent_create_harness_type_3_type_1(data)

                return harness_type_3_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(
                AgentCreateHarnessType1
                | AgentCreateHarnessType2Type1
                | AgentCreateHarnessType3Type1
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

        agent_create = cls(
            name=name,
            effort=effort,
            enabled=enabled,
            environment_id=environment_id,
            harness=harness,
            model=model,
        )

        return agent_create
