from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy
    from ..models.attachment_create import AttachmentCreate
    from ..models.fan_out_session import FanOutSession


T = TypeVar("T", bound="TaskCreate")


@_attrs_define
class TaskCreate:
    """A task to create; every field is optional. With a prompt, a session starts at once.

    Attributes:
        approvals (ApprovalPolicy | None | Unset):
        attachments (list[AttachmentCreate] | None | Unset): Context for the agent.
        created_by (None | str | Unset): The agent it runs as, by id or name (default: the connected agent).
        effort (None | str | Unset): An effort in the harness's vocabulary.
        environment_id (None | str | Unset): Its environment (default: its agent's).
        harness (None | str | Unset): `claude`, `codex`, ... (default: the agent's, else claude).
        idle_timeout_seconds (int | None | Unset): Seconds an idle session stays open: 1 to 604800 (a week), default
            600.
        model (None | str | Unset): A model id as `GET /v1/models` lists it.
        prompt (None | str | Unset): Its first message.
        sessions (list[FanOutSession] | None | Unset): A fan-out: 1 to 8 sessions, each in its own worktree from the
            same
            base, all given the `prompt` (then leave `harness`, `model` and
            `effort` out: each entry names its own).
        title (None | str | Unset): Its title (default: the prompt's first line).
    """

    approvals: ApprovalPolicy | None | Unset = UNSET
    attachments: list[AttachmentCreate] | None | Unset = UNSET
    created_by: None | str | Unset = UNSET
    effort: None | str | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    harness: None | str | Unset = UNSET
    idle_timeout_seconds: int | None | Unset = UNSET
    model: None | str | Unset = UNSET
    prompt: None | str | Unset = UNSET
    sessions: list[FanOutSession] | None | Unset = UNSET
    title: None | str | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        from ..models.approval_policy import ApprovalPolicy

        approvals: dict[str, Any] | None | Unset
        if isinstance(self.approvals, Unset):
            approvals = UNSET
        elif isinstance(self.approvals, ApprovalPolicy):
            approvals = self.approvals.to_dict()
        else:
            approvals = self.approvals

        attachments: list[dict[str, Any]] | None | Unset
        if isinstance(self.attachments, Unset):
            attachments = UNSET
        elif isinstance(self.attachments, list):
            attachments = []
            for attachments_type_0_item_data in self.attachments:
                attachments_type_0_item = attachments_type_0_item_data.to_dict()
                attachments.append(attachments_type_0_item)

        else:
            attachments = self.attachments

        created_by: None | str | Unset
        if isinstance(self.created_by, Unset):
            created_by = UNSET
        else:
            created_by = self.created_by

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

        idle_timeout_seconds: int | None | Unset
        if isinstance(self.idle_timeout_seconds, Unset):
            idle_timeout_seconds = UNSET
        else:
            idle_timeout_seconds = self.idle_timeout_seconds

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        prompt: None | str | Unset
        if isinstance(self.prompt, Unset):
            prompt = UNSET
        else:
            prompt = self.prompt

        sessions: list[dict[str, Any]] | None | Unset
        if isinstance(self.sessions, Unset):
            sessions = UNSET
        elif isinstance(self.sessions, list):
            sessions = []
            for sessions_type_0_item_data in self.sessions:
                sessions_type_0_item = sessions_type_0_item_data.to_dict()
                sessions.append(sessions_type_0_item)

        else:
            sessions = self.sessions

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if attachments is not UNSET:
            field_dict["attachments"] = attachments
        if created_by is not UNSET:
            field_dict["created_by"] = created_by
        if effort is not UNSET:
            field_dict["effort"] = effort
        if environment_id is not UNSET:
            field_dict["environment_id"] = environment_id
        if harness is not UNSET:
            field_dict["harness"] = harness
        if idle_timeout_seconds is not UNSET:
            field_dict["idle_timeout_seconds"] = idle_timeout_seconds
        if model is not UNSET:
            field_dict["model"] = model
        if prompt is not UNSET:
            field_dict["prompt"] = prompt
        if sessions is not UNSET:
            field_dict["sessions"] = sessions
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_policy import ApprovalPolicy
        from ..models.attachment_create import AttachmentCreate
        from ..models.fan_out_session import FanOutSession

        d = dict(src_dict)

        def _parse_approvals(data: object) -> ApprovalPolicy | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                approvals_type_1 = ApprovalPolicy.from_dict(data)

                return approvals_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ApprovalPolicy | None | Unset, data)

        approvals = _parse_approvals(d.pop("approvals", UNSET))

        def _parse_attachments(data: object) -> list[AttachmentCreate] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                attachments_type_0 = []
                _attachments_type_0 = data
                for attachments_type_0_item_data in _attachments_type_0:
                    attachments_type_0_item = AttachmentCreate.from_dict(
                        attachments_type_0_item_data
                    )

                    attachments_type_0.append(attachments_type_0_item)

                return attachments_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[AttachmentCreate] | None | Unset, data)

        attachments = _parse_attachments(d.pop("attachments", UNSET))

        def _parse_created_by(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        created_by = _parse_created_by(d.pop("created_by", UNSET))

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

        def _parse_idle_timeout_seconds(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        idle_timeout_seconds = _parse_idle_timeout_seconds(
            d.pop("idle_timeout_seconds", UNSET)
        )

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_prompt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        prompt = _parse_prompt(d.pop("prompt", UNSET))

        def _parse_sessions(data: object) -> list[FanOutSession] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                sessions_type_0 = []
                _sessions_type_0 = data
                for sessions_type_0_item_data in _sessions_type_0:
                    sessions_type_0_item = FanOutSession.from_dict(
                        sessions_type_0_item_data
                    )

                    sessions_type_0.append(sessions_type_0_item)

                return sessions_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[FanOutSession] | None | Unset, data)

        sessions = _parse_sessions(d.pop("sessions", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        task_create = cls(
            approvals=approvals,
            attachments=attachments,
            created_by=created_by,
            effort=effort,
            environment_id=environment_id,
            harness=harness,
            idle_timeout_seconds=idle_timeout_seconds,
            model=model,
            prompt=prompt,
            sessions=sessions,
            title=title,
        )

        return task_create
