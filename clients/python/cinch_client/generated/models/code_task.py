from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.code_task_status import CodeTaskStatus, check_code_task_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.task_result import TaskResult


T = TypeVar("T", bound="CodeTask")


@_attrs_define
class CodeTask:
    """A job: its call, its status and, once it has ended, its result.

    Attributes:
        call_id (str): The call's id.
        created_at (str): When it started (RFC 3339).
        environment_id (str): The environment it runs in.
        run_id (str): The run it belongs to.
        status (CodeTaskStatus): Where a job is: running, or how it ended.
        turn_id (str): The engine's turn.
        result (None | TaskResult | Unset):
        session_id (None | str | Unset): The harness session, once reported.
    """

    call_id: str
    created_at: str
    environment_id: str
    run_id: str
    status: CodeTaskStatus
    turn_id: str
    result: None | TaskResult | Unset = UNSET
    session_id: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.task_result import TaskResult

        call_id = self.call_id

        created_at = self.created_at

        environment_id = self.environment_id

        run_id = self.run_id

        status: str = self.status

        turn_id = self.turn_id

        result: dict[str, Any] | None | Unset
        if isinstance(self.result, Unset):
            result = UNSET
        elif isinstance(self.result, TaskResult):
            result = self.result.to_dict()
        else:
            result = self.result

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "call_id": call_id,
                "created_at": created_at,
                "environment_id": environment_id,
                "run_id": run_id,
                "status": status,
                "turn_id": turn_id,
            }
        )
        if result is not UNSET:
            field_dict["result"] = result
        if session_id is not UNSET:
            field_dict["session_id"] = session_id

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_result import TaskResult

        d = dict(src_dict)
        call_id = d.pop("call_id")

        created_at = d.pop("created_at")

        environment_id = d.pop("environment_id")

        run_id = d.pop("run_id")

        status = check_code_task_status(d.pop("status"))

        turn_id = d.pop("turn_id")

        def _parse_result(data: object) -> None | TaskResult | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                result_type_1 = TaskResult.from_dict(data)

                return result_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TaskResult | Unset, data)

        result = _parse_result(d.pop("result", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))

        code_task = cls(
            call_id=call_id,
            created_at=created_at,
            environment_id=environment_id,
            run_id=run_id,
            status=status,
            turn_id=turn_id,
            result=result,
            session_id=session_id,
        )

        code_task.additional_properties = d
        return code_task

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
