from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.cli_drift import CliDrift, check_cli_drift
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.changed_file import ChangedFile
    from ..models.driver_used import DriverUsed
    from ..models.task_result_unknown_events import TaskResultUnknownEvents
    from ..models.task_result_usage_type_0 import TaskResultUsageType0


T = TypeVar("T", bound="TaskResult")


@_attrs_define
class TaskResult:
    """How a job ended, with the spec's metadata.

    Attributes:
        deletions (int): Lines removed.
        duration_ms (int): From start to end.
        files_changed (list[ChangedFile]): The changed files, at most 30.
        harness (str): The harness's driver.
        insertions (int): Lines added.
        log_path (str): The raw harness log, as the result text's `log:` line names it; the
            log route reads it while it is kept.
        not_json_lines (int): Lines of the output that were not JSON.
        repository (str): The repository: the environment's name, as `repo` takes it.
        result_text (str): The result in the spec's text format.
        total_files (int): All changed files, listed or not.
        unknown_events (TaskResultUnknownEvents): Lines of valid JSON of a type the driver does not know, counted by
            type (`(no type)` for those without one): the sign that the CLI's
            output changed. Type names are cut at 64 characters, characters other
            than letters, digits and `_-./:@` shown as `?`; past 32 types per
            turn the rest count under `(other types)`.
        cli_drift (CliDrift | None | Unset):
        cli_tested (None | str | Unset): The CLI versions its driver was tested with (a semver range); null
            when it names none.
        cli_version (None | str | Unset): The CLI's version when the turn started, when it said one.
        detail (None | str | Unset): What explains the status, when something does.
        driver (DriverUsed | None | Unset):
        end_sha (None | str | Unset): The end checkpoint's commit.
        exit_code (int | None | Unset): The CLI's exit code, when it exited by itself.
        final_message (None | str | Unset): The harness's final message (redacted).
        model (None | str | Unset): The model it ran on, as the harness reported it, else as asked.
        start_sha (None | str | Unset): The start checkpoint's commit.
        usage (None | TaskResultUsageType0 | Unset): Its tokens and cost; null when the harness reported no usage.
    """

    deletions: int
    duration_ms: int
    files_changed: list[ChangedFile]
    harness: str
    insertions: int
    log_path: str
    not_json_lines: int
    repository: str
    result_text: str
    total_files: int
    unknown_events: TaskResultUnknownEvents
    cli_drift: CliDrift | None | Unset = UNSET
    cli_tested: None | str | Unset = UNSET
    cli_version: None | str | Unset = UNSET
    detail: None | str | Unset = UNSET
    driver: DriverUsed | None | Unset = UNSET
    end_sha: None | str | Unset = UNSET
    exit_code: int | None | Unset = UNSET
    final_message: None | str | Unset = UNSET
    model: None | str | Unset = UNSET
    start_sha: None | str | Unset = UNSET
    usage: None | TaskResultUsageType0 | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.driver_used import DriverUsed
        from ..models.task_result_usage_type_0 import TaskResultUsageType0

        deletions = self.deletions

        duration_ms = self.duration_ms

        files_changed = []
        for files_changed_item_data in self.files_changed:
            files_changed_item = files_changed_item_data.to_dict()
            files_changed.append(files_changed_item)

        harness = self.harness

        insertions = self.insertions

        log_path = self.log_path

        not_json_lines = self.not_json_lines

        repository = self.repository

        result_text = self.result_text

        total_files = self.total_files

        unknown_events = self.unknown_events.to_dict()

        cli_drift: None | str | Unset
        if isinstance(self.cli_drift, Unset):
            cli_drift = UNSET
        elif isinstance(self.cli_drift, str):
            cli_drift = self.cli_drift
        else:
            cli_drift = self.cli_drift

        cli_tested: None | str | Unset
        if isinstance(self.cli_tested, Unset):
            cli_tested = UNSET
        else:
            cli_tested = self.cli_tested

        cli_version: None | str | Unset
        if isinstance(self.cli_version, Unset):
            cli_version = UNSET
        else:
            cli_version = self.cli_version

        detail: None | str | Unset
        if isinstance(self.detail, Unset):
            detail = UNSET
        else:
            detail = self.detail

        driver: dict[str, Any] | None | Unset
        if isinstance(self.driver, Unset):
            driver = UNSET
        elif isinstance(self.driver, DriverUsed):
            driver = self.driver.to_dict()
        else:
            driver = self.driver

        end_sha: None | str | Unset
        if isinstance(self.end_sha, Unset):
            end_sha = UNSET
        else:
            end_sha = self.end_sha

        exit_code: int | None | Unset
        if isinstance(self.exit_code, Unset):
            exit_code = UNSET
        else:
            exit_code = self.exit_code

        final_message: None | str | Unset
        if isinstance(self.final_message, Unset):
            final_message = UNSET
        else:
            final_message = self.final_message

        model: None | str | Unset
        if isinstance(self.model, Unset):
            model = UNSET
        else:
            model = self.model

        start_sha: None | str | Unset
        if isinstance(self.start_sha, Unset):
            start_sha = UNSET
        else:
            start_sha = self.start_sha

        usage: dict[str, Any] | None | Unset
        if isinstance(self.usage, Unset):
            usage = UNSET
        elif isinstance(self.usage, TaskResultUsageType0):
            usage = self.usage.to_dict()
        else:
            usage = self.usage

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "deletions": deletions,
                "duration_ms": duration_ms,
                "files_changed": files_changed,
                "harness": harness,
                "insertions": insertions,
                "log_path": log_path,
                "not_json_lines": not_json_lines,
                "repository": repository,
                "result_text": result_text,
                "total_files": total_files,
                "unknown_events": unknown_events,
            }
        )
        if cli_drift is not UNSET:
            field_dict["cli_drift"] = cli_drift
        if cli_tested is not UNSET:
            field_dict["cli_tested"] = cli_tested
        if cli_version is not UNSET:
            field_dict["cli_version"] = cli_version
        if detail is not UNSET:
            field_dict["detail"] = detail
        if driver is not UNSET:
            field_dict["driver"] = driver
        if end_sha is not UNSET:
            field_dict["end_sha"] = end_sha
        if exit_code is not UNSET:
            field_dict["exit_code"] = exit_code
        if final_message is not UNSET:
            field_dict["final_message"] = final_message
        if model is not UNSET:
            field_dict["model"] = model
        if start_sha is not UNSET:
            field_dict["start_sha"] = start_sha
        if usage is not UNSET:
            field_dict["usage"] = usage

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.changed_file import ChangedFile
        from ..models.driver_used import DriverUsed
        from ..models.task_result_unknown_events import TaskResultUnknownEvents
        from ..models.task_result_usage_type_0 import TaskResultUsageType0

        d = dict(src_dict)
        deletions = d.pop("deletions")

        duration_ms = d.pop("duration_ms")

        files_changed = []
        _files_changed = d.pop("files_changed")
        for files_changed_item_data in _files_changed:
            files_changed_item = ChangedFile.from_dict(files_changed_item_data)

            files_changed.append(files_changed_item)

        harness = d.pop("harness")

        insertions = d.pop("insertions")

        log_path = d.pop("log_path")

        not_json_lines = d.pop("not_json_lines")

        repository = d.pop("repository")

        result_text = d.pop("result_text")

        total_files = d.pop("total_files")

        unknown_events = TaskResultUnknownEvents.from_dict(d.pop("unknown_events"))

        def _parse_cli_drift(data: object) -> CliDrift | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                cli_drift_type_1 = check_cli_drift(data)

                return cli_drift_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CliDrift | None | Unset, data)

        cli_drift = _parse_cli_drift(d.pop("cli_drift", UNSET))

        def _parse_cli_tested(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cli_tested = _parse_cli_tested(d.pop("cli_tested", UNSET))

        def _parse_cli_version(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        cli_version = _parse_cli_version(d.pop("cli_version", UNSET))

        def _parse_detail(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        detail = _parse_detail(d.pop("detail", UNSET))

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

        def _parse_end_sha(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        end_sha = _parse_end_sha(d.pop("end_sha", UNSET))

        def _parse_exit_code(data: object) -> int | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(int | None | Unset, data)

        exit_code = _parse_exit_code(d.pop("exit_code", UNSET))

        def _parse_final_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        final_message = _parse_final_message(d.pop("final_message", UNSET))

        def _parse_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        model = _parse_model(d.pop("model", UNSET))

        def _parse_start_sha(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        start_sha = _parse_start_sha(d.pop("start_sha", UNSET))

        def _parse_usage(data: object) -> None | TaskResultUsageType0 | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                usage_type_0 = TaskResultUsageType0.from_dict(data)

                return usage_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | TaskResultUsageType0 | Unset, data)

        usage = _parse_usage(d.pop("usage", UNSET))

        task_result = cls(
            deletions=deletions,
            duration_ms=duration_ms,
            files_changed=files_changed,
            harness=harness,
            insertions=insertions,
            log_path=log_path,
            not_json_lines=not_json_lines,
            repository=repository,
            result_text=result_text,
            total_files=total_files,
            unknown_events=unknown_events,
            cli_drift=cli_drift,
            cli_tested=cli_tested,
            cli_version=cli_version,
            detail=detail,
            driver=driver,
            end_sha=end_sha,
            exit_code=exit_code,
            final_message=final_message,
            model=model,
            start_sha=start_sha,
            usage=usage,
        )

        task_result.additional_properties = d
        return task_result

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
