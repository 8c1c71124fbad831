from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.close_reason import CloseReason, check_close_reason
from ..models.fork_mode import ForkMode, check_fork_mode
from ..models.rebuilt_from import RebuiltFrom, check_rebuilt_from
from ..models.session_status import SessionStatus, check_session_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.forked_from import ForkedFrom
    from ..models.usage_totals import UsageTotals


T = TypeVar("T", bound="EnvelopeVecSessionDataItem")


@_attrs_define
class EnvelopeVecSessionDataItem:
    """A session.

    Attributes:
        account_id (str): The account it belongs to.
        agent_id (str): The agent it runs as (its harnesses' HOME is that agent's).
        auto_commit (bool): Whether what a turn changed is committed on the branch.
        branch_name (str): The branch its workspace is on.
        created_at (str): When it was created (RFC 3339).
        harness (str): The harness (a driver's name).
        id (str): Its id; also the run id of its turns.
        last_activity_at (str): When it last started or ended a turn or took a message.
        retries (int): Attempts to get capacity so far in this wait.
        status (SessionStatus): Where a session is in its life, stored as its snake_case name.
        task_id (str): Its task.
        title (str): Its title.
        updated_at (str): When it last changed (RFC 3339).
        usage (UsageTotals): The tokens and cost of some turns.
        vendor (str): Who makes the harness's models.
        base_branch (None | str | Unset): The branch that one started from.
        close_reason (CloseReason | None | Unset):
        current_turn (None | str | Unset): The engine turn running now.
        environment_id (None | str | Unset): Its environment.
        error_message (None | str | Unset): What went wrong and what to do next.
        fork_mode (ForkMode | None | Unset):
        forked_from (ForkedFrom | None | Unset):
        harness_effort (None | str | Unset): The effort it runs at, when not the harness's default.
        harness_model (None | str | Unset): The model it runs, when not the harness's default.
        harness_session_id (None | str | Unset): The harness's own session id, once reported; later turns resume it.
        moved_from_node (None | str | Unset): The node it was taken over from, until its next turn starts: that
            turn starts a new harness session, briefed with the conversation.
        rebuilt_from (None | RebuiltFrom | Unset):
        waiting_since (None | str | Unset): When the wait for capacity began; only while `waiting`.
        workspace (None | str | Unset): The workspace's path, once made.
    """

    account_id: str
    agent_id: str
    auto_commit: bool
    branch_name: str
    created_at: str
    harness: str
    id: str
    last_activity_at: str
    retries: int
    status: SessionStatus
    task_id: str
    title: str
    updated_at: str
    usage: UsageTotals
    vendor: str
    base_branch: None | str | Unset = UNSET
    close_reason: CloseReason | None | Unset = UNSET
    current_turn: None | str | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    error_message: None | str | Unset = UNSET
    fork_mode: ForkMode | None | Unset = UNSET
    forked_from: ForkedFrom | None | Unset = UNSET
    harness_effort: None | str | Unset = UNSET
    harness_model: None | str | Unset = UNSET
    harness_session_id: None | str | Unset = UNSET
    moved_from_node: None | str | Unset = UNSET
    rebuilt_from: None | RebuiltFrom | Unset = UNSET
    waiting_since: None | str | Unset = UNSET
    workspace: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.forked_from import ForkedFrom

        account_id = self.account_id

        agent_id = self.agent_id

        auto_commit = self.auto_commit

        branch_name = self.branch_name

        created_at = self.created_at

        harness = self.harness

        id = self.id

        last_activity_at = self.last_activity_at

        retries = self.retries

        status: str = self.status

        task_id = self.task_id

        title = self.title

        updated_at = self.updated_at

        usage = self.usage.to_dict()

        vendor = self.vendor

        base_branch: None | str | Unset
        if isinstance(self.base_branch, Unset):
            base_branch = UNSET
        else:
            base_branch = self.base_branch

        close_reason: None | str | Unset
        if isinstance(self.close_reason, Unset):
            close_reason = UNSET
        elif isinstance(self.close_reason, str):
            close_reason = self.close_reason
        else:
            close_reason = self.close_reason

        current_turn: None | str | Unset
        if isinstance(self.current_turn, Unset):
            current_turn = UNSET
        else:
            current_turn = self.current_turn

        environment_id: None | str | Unset
        if isinstance(self.environment_id, Unset):
            environment_id = UNSET
        else:
            environment_id = self.environment_id

        error_message: None | str | Unset
        if isinstance(self.error_message, Unset):
            error_message = UNSET
        else:
            error_message = self.error_message

        fork_mode: None | str | Unset
        if isinstance(self.fork_mode, Unset):
            fork_mode = UNSET
        elif isinstance(self.fork_mode, str):
            fork_mode = self.fork_mode
        else:
            fork_mode = self.fork_mode

        forked_from: dict[str, Any] | None | Unset
        if isinstance(self.forked_from, Unset):
            forked_from = UNSET
        elif isinstance(self.forked_from, ForkedFrom):
            forked_from = self.forked_from.to_dict()
        else:
            forked_from = self.forked_from

        harness_effort: None | str | Unset
        if isinstance(self.harness_effort, Unset):
            harness_effort = UNSET
        else:
            harness_effort = self.harness_effort

        harness_model: None | str | Unset
        if isinstance(self.harness_model, Unset):
            harness_model = UNSET
        else:
            harness_model = self.harness_model

        harness_session_id: None | str | Unset
        if isinstance(self.harness_session_id, Unset):
            harness_session_id = UNSET
        else:
            harness_session_id = self.harness_session_id

        moved_from_node: None | str | Unset
        if isinstance(self.moved_from_node, Unset):
            moved_from_node = UNSET
        else:
            moved_from_node = self.moved_from_node

        rebuilt_from: None | str | Unset
        if isinstance(self.rebuilt_from, Unset):
            rebuilt_from = UNSET
        elif isinstance(self.rebuilt_from, str):
            rebuilt_from = self.rebuilt_from
        else:
            rebuilt_from = self.rebuilt_from

        waiting_since: None | str | Unset
        if isinstance(self.waiting_since, Unset):
            waiting_since = UNSET
        else:
            waiting_since = self.waiting_since

        workspace: None | str | Unset
        if isinstance(self.workspace, Unset):
            workspace = UNSET
        else:
            workspace = self.workspace

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "agent_id": agent_id,
                "auto_commit": auto_commit,
                "branch_name": branch_name,
                "created_at": created_at,
                "harness": harness,
                "id": id,
                "last_activity_at": last_activity_at,
                "retries": retries,
                "status": status,
                "task_id": task_id,
                "title": title,
                "updated_at": updated_at,
                "usage": usage,
                "vendor": vendor,
            }
        )
        if base_branch is not UNSET:
            field_dict["base_branch"] = base_branch
        if close_reason is not UNSET:
            field_dict["close_reason"] = close_reason
        if current_turn is not UNSET:
            field_dict["current_turn"] = current_turn
        if environment_id is not UNSET:
            field_dict["environment_id"] = environment_id
        if error_message is not UNSET:
            field_dict["error_message"] = error_message
        if fork_mode is not UNSET:
            field_dict["fork_mode"] = fork_mode
        if forked_from is not UNSET:
            field_dict["forked_from"] = forked_from
        if harness_effort is not UNSET:
            field_dict["harness_effort"] = harness_effort
        if harness_model is not UNSET:
            field_dict["harness_model"] = harness_model
        if harness_session_id is not UNSET:
            field_dict["harness_session_id"] = harness_session_id
        if moved_from_node is not UNSET:
            field_dict["moved_from_node"] = moved_from_node
        if rebuilt_from is not UNSET:
            field_dict["rebuilt_from"] = rebuilt_from
        if waiting_since is not UNSET:
            field_dict["waiting_since"] = waiting_since
        if workspace is not UNSET:
            field_dict["workspace"] = workspace

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.forked_from import ForkedFrom
        from ..models.usage_totals import UsageTotals

        d = dict(src_dict)
        account_id = d.pop("account_id")

        agent_id = d.pop("agent_id")

        auto_commit = d.pop("auto_commit")

        branch_name = d.pop("branch_name")

        created_at = d.pop("created_at")

        harness = d.pop("harness")

        id = d.pop("id")

        last_activity_at = d.pop("last_activity_at")

        retries = d.pop("retries")

        status = check_session_status(d.pop("status"))

        task_id = d.pop("task_id")

        title = d.pop("title")

        updated_at = d.pop("updated_at")

        usage = UsageTotals.from_dict(d.pop("usage"))

        vendor = d.pop("vendor")

        def _parse_base_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_branch = _parse_base_branch(d.pop("base_branch", UNSET))

        def _parse_close_reason(data: object) -> CloseReason | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                close_reason_type_1 = check_close_reason(data)

                return close_reason_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CloseReason | None | Unset, data)

        close_reason = _parse_close_reason(d.pop("close_reason", UNSET))

        def _parse_current_turn(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        current_turn = _parse_current_turn(d.pop("current_turn", UNSET))

        def _parse_environment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        environment_id = _parse_environment_id(d.pop("environment_id", UNSET))

        def _parse_error_message(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        error_message = _parse_error_message(d.pop("error_message", UNSET))

        def _parse_fork_mode(data: object) -> ForkMode | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                fork_mode_type_1 = check_fork_mode(data)

                return fork_mode_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ForkMode | None | Unset, data)

        fork_mode = _parse_fork_mode(d.pop("fork_mode", UNSET))

        def _parse_forked_from(data: object) -> ForkedFrom | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                forked_from_type_1 = ForkedFrom.from_dict(data)

                return forked_from_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ForkedFrom | None | Unset, data)

        forked_from = _parse_forked_from(d.pop("forked_from", UNSET))

        def _parse_harness_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness_effort = _parse_harness_effort(d.pop("harness_effort", UNSET))

        def _parse_harness_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness_model = _parse_harness_model(d.pop("harness_model", UNSET))

        def _parse_harness_session_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        harness_session_id = _parse_harness_session_id(
            d.pop("harness_session_id", UNSET)
        )

        def _parse_moved_from_node(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        moved_from_node = _parse_moved_from_node(d.pop("moved_from_node", UNSET))

        def _parse_rebuilt_from(data: object) -> None | RebuiltFrom | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                rebuilt_from_type_1 = check_rebuilt_from(data)

                return rebuilt_from_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | RebuiltFrom | Unset, data)

        rebuilt_from = _parse_rebuilt_from(d.pop("rebuilt_from", UNSET))

        def _parse_waiting_since(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        waiting_since = _parse_waiting_since(d.pop("waiting_since", UNSET))

        def _parse_workspace(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        workspace = _parse_workspace(d.pop("workspace", UNSET))

        envelope_vec_session_data_item = cls(
            account_id=account_id,
            agent_id=agent_id,
            auto_commit=auto_commit,
            branch_name=branch_name,
            created_at=created_at,
            harness=harness,
            id=id,
            last_activity_at=last_activity_at,
            retries=retries,
            status=status,
            task_id=task_id,
            title=title,
            updated_at=updated_at,
            usage=usage,
            vendor=vendor,
            base_branch=base_branch,
            close_reason=close_reason,
            current_turn=current_turn,
            environment_id=environment_id,
            error_message=error_message,
            fork_mode=fork_mode,
            forked_from=forked_from,
            harness_effort=harness_effort,
            harness_model=harness_model,
            harness_session_id=harness_session_id,
            moved_from_node=moved_from_node,
            rebuilt_from=rebuilt_from,
            waiting_since=waiting_since,
            workspace=workspace,
        )

        envelope_vec_session_data_item.additional_properties = d
        return envelope_vec_session_data_item

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
