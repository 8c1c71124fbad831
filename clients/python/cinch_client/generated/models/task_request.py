from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..models.task_request_harness import TaskRequestHarness, check_task_request_harness
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.task_note import TaskNote


T = TypeVar("T", bound="TaskRequest")


@_attrs_define
class TaskRequest:
    """A job to start: one turn, without a task or session.

    Attributes:
        brief (str): The whole task, self-contained: not blank.
        harness (TaskRequestHarness): The harness: a driver's name, as `GET /v1/models` lists them. None
            picked is `harness.missing`.
        effort (None | str | Unset): The effort, when not the harness's default.
        model (None | str | Unset): The model, when not the harness's default.
        notes (list[TaskNote] | None | Unset): Texts appended to the brief, each under `# <name>`.
        repo (None | str | Unset): The environment's name; optional when the account has one.
        session_id (None | str | Unset): Resumes that harness session; the brief is its next turn. Letters,
            digits and `_ . : -`, at most 200 characters.
        timeout_minutes (int | None | Unset): Minutes before the harness is stopped: 1 to 60, default 30.
    """

    brief: str
    harness: TaskRequestHarness
    effort: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    notes: list[TaskNote] | None | Unset = UNSET
    repo: None | str | Unset = UNSET
    session_id: None | str | Unset = UNSET
    timeout_minutes: int | None | Unset = UNSET

    def to_dict(self) -> dict[str, Any]:
        brief = self.brief

        harness: str = self.harness

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

        notes: list[dict[str, Any]] | None | Unset
        if isinstance(self.notes, Unset):
            notes = UNSET
        elif isinstance(self.notes, list):
            notes = []
            for notes_type_0_item_data in self.notes:
                notes_type_0_item = notes_type_0_item_data.to_dict()
                notes.append(notes_type_0_item)

        else:
            notes = self.notes

        repo: None | str | Unset
        if isinstance(self.repo, Unset):
            repo = UNSET
        else:
            repo = self.repo

        session_id: None | str | Unset
        if isinstance(self.session_id, Unset):
            session_id = UNSET
        else:
            session_id = self.session_id

        timeout_minutes: int | None | Unset
        if isinstance(self.timeout_minutes, Unset):
            timeout_minutes = UNSET
        else:
            timeout_minutes = self.timeout_minutes

        field_dict: dict[str, Any] = {}

        field_dict.update(
            {
                "brief": brief,
                "harness": harness,
            }
        )
        if effort is not UNSET:
            field_dict["effort"] = effort
        if model is not UNSET:
            field_dict["model"] = model
        if notes is not UNSET:
            field_dict["notes"] = notes
        if repo is not UNSET:
            field_dict["repo"] = repo
        if session_id is not UNSET:
            field_dict["session_id"] = session_id
        if timeout_minutes is not UNSET:
            field_dict["timeout_minutes"] = timeout_minutes

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.task_note import TaskNote

        d = dict(src_dict)
        brief = d.pop("brief")

        harness = check_task_request_harness(d.pop("harness"))

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

        def _parse_notes(data: object) -> list[TaskNote] | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, list):
                    raise TypeError()
                notes_type_0 = []
                _notes_type_0 = data
                for notes_type_0_item_data in _notes_type_0:
                    notes_type_0_item = TaskNote.from_dict(notes_type_0_item_data)

                    notes_type_0.append(notes_type_0_item)

                return notes_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(list[TaskNote] | None | Unset, data)

        notes = _parse_notes(d.pop("notes", UNSET))

        def _parse_repo(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        repo = _parse_repo(d.pop("repo", UNSET))

        def _parse_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        session_id = _parse_session_id(d.pop("session_id", UNSET))

        def _parse_timeout_minutes(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        timeout_minutes = _parse_timeout_minutes(d.pop("timeout_minutes", UNSET))

        task_request = cls(
            brief=brief,
            harness=harness,
            effort=effort,
            model=model,
            notes=notes,
            repo=repo,
            session_id=session_id,
            timeout_minutes=timeout_minutes,
        )

        return task_request
