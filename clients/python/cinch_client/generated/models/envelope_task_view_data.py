from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.close_reason import CloseReason, check_close_reason
from ..models.session_status import SessionStatus, check_session_status
from ..models.task_status import TaskStatus, check_task_status
from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.binding_constraint import BindingConstraint
    from ..models.usage_totals import UsageTotals


T = TypeVar("T", bound="EnvelopeTaskViewData")


@_attrs_define
class EnvelopeTaskViewData:
    """A task as clients see it.

    Attributes:
        account_id (str): The account it belongs to.
        created_at (str): When it was created (RFC 3339).
        created_by (str): The agent it runs as.
        created_by_name (str): That agent's name.
        id (str): Its id.
        idle_timeout_seconds (int): Seconds an idle session waits for a message before it is closed.
        session_count (int): How many sessions it has.
        status (TaskStatus): A task's lifecycle status.
        title (str): Its title.
        updated_at (str): When it last changed (RFC 3339).
        usage (UsageTotals): The tokens and cost of some turns.
        environment_id (None | str | Unset): The environment its sessions use unless they name another.
        harness (None | str | Unset): The harness of its newest session.
        last_message_preview (None | str | Unset): One line: the last thing the agent said on it, markdown stripped.
        owner (None | str | Unset): The member responsible for it; none when an agent opened it ("needs someone").
        owner_name (None | str | Unset): That member's name.
        session_close_reason (CloseReason | None | Unset):
        session_status (None | SessionStatus | Unset):
        binding_constraint (BindingConstraint | None | Unset):
    """

    account_id: str
    created_at: str
    created_by: str
    created_by_name: str
    id: str
    idle_timeout_seconds: int
    session_count: int
    status: TaskStatus
    title: str
    updated_at: str
    usage: UsageTotals
    environment_id: None | str | Unset = UNSET
    harness: None | str | Unset = UNSET
    last_message_preview: None | str | Unset = UNSET
    owner: None | str | Unset = UNSET
    owner_name: None | str | Unset = UNSET
    session_close_reason: CloseReason | None | Unset = UNSET
    session_status: None | SessionStatus | Unset = UNSET
    binding_constraint: BindingConstraint | None | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.binding_constraint import BindingConstraint

        account_id = self.account_id

        created_at = self.created_at

        created_by = self.created_by

        created_by_name = self.created_by_name

        id = self.id

        idle_timeout_seconds = self.idle_timeout_seconds

        session_count = self.session_count

        status: str = self.status

        title = self.title

        updated_at = self.updated_at

        usage = self.usage.to_dict()

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

        last_message_preview: None | str | Unset
        if isinstance(self.last_message_preview, Unset):
            last_message_preview = UNSET
        else:
            last_message_preview = self.last_message_preview

        owner: None | str | Unset
        if isinstance(self.owner, Unset):
            owner = UNSET
        else:
            owner = self.owner

        owner_name: None | str | Unset
        if isinstance(self.owner_name, Unset):
            owner_name = UNSET
        else:
            owner_name = self.owner_name

        session_close_reason: None | str | Unset
        if isinstance(self.session_close_reason, Unset):
            session_close_reason = UNSET
        elif isinstance(self.session_close_reason, str):
            session_close_reason = self.session_close_reason
        else:
            session_close_reason = self.session_close_reason

        session_status: None | str | Unset
        if isinstance(self.session_status, Unset):
            session_status = UNSET
        elif isinstance(self.session_status, str):
            session_status = self.session_status
        else:
            session_status = self.session_status

        binding_constraint: dict[str, Any] | None | Unset
        if isinstance(self.binding_constraint, Unset):
            binding_constraint = UNSET
        elif isinstance(self.binding_constraint, BindingConstraint):
            binding_constraint = self.binding_constraint.to_dict()
        else:
            binding_constraint = self.binding_constraint

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "account_id": account_id,
                "created_at": created_at,
                "created_by": created_by,
                "created_by_name": created_by_name,
                "id": id,
                "idle_timeout_seconds": idle_timeout_seconds,
                "session_count": session_count,
                "status": status,
                "title": title,
                "updated_at": updated_at,
                "usage": usage,
            }
        )
        if environment_id is not UNSET:
            field_dict["environment_id"] = environment_id
        if harness is not UNSET:
            field_dict["harness"] = harness
        if last_message_preview is not UNSET:
            field_dict["last_message_preview"] = last_message_preview
        if owner is not UNSET:
            field_dict["owner"] = owner
        if owner_name is not UNSET:
            field_dict["owner_name"] = owner_name
        if session_close_reason is not UNSET:
            field_dict["session_close_reason"] = session_close_reason
        if session_status is not UNSET:
            field_dict["session_status"] = session_status
        if binding_constraint is not UNSET:
            field_dict["binding_constraint"] = binding_constraint

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.binding_constraint import BindingConstraint
        from ..models.usage_totals import UsageTotals

        d = dict(src_dict)
        account_id = d.pop("account_id")

        created_at = d.pop("created_at")

        created_by = d.pop("created_by")

        created_by_name = d.pop("created_by_name")

        id = d.pop("id")

        idle_timeout_seconds = d.pop("idle_timeout_seconds")

        session_count = d.pop("session_count")

        status = check_task_status(d.pop("status"))

        title = d.pop("title")

        updated_at = d.pop("updated_at")

        usage = UsageTotals.from_dict(d.pop("usage"))

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

        def _parse_last_message_preview(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_message_preview = _parse_last_message_preview(
            d.pop("last_message_preview", UNSET)
        )

        def _parse_owner(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        owner = _parse_owner(d.pop("owner", UNSET))

        def _parse_owner_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        owner_name = _parse_owner_name(d.pop("owner_name", UNSET))

        def _parse_session_close_reason(data: object) -> CloseReason | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                session_close_reason_type_1 = check_close_reason(data)

                return session_close_reason_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(CloseReason | None | Unset, data)

        session_close_reason = _parse_session_close_reason(
            d.pop("session_close_reason", UNSET)
        )

        def _parse_session_status(data: object) -> None | SessionStatus | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, str):
                    raise TypeError()
                session_status_type_1 = check_session_status(data)

                return session_status_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(None | SessionStatus | Unset, data)

        session_status = _parse_session_status(d.pop("session_status", UNSET))

        def _parse_binding_constraint(data: object) -> BindingConstraint | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                binding_constraint_type_1 = BindingConstraint.from_dict(data)

                return binding_constraint_type_1
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(BindingConstraint | None | Unset, data)

        binding_constraint = _parse_binding_constraint(
            d.pop("binding_constraint", UNSET)
        )

        envelope_task_view_data = cls(
            account_id=account_id,
            created_at=created_at,
            created_by=created_by,
            created_by_name=created_by_name,
            id=id,
            idle_timeout_seconds=idle_timeout_seconds,
            session_count=session_count,
            status=status,
            title=title,
            updated_at=updated_at,
            usage=usage,
            environment_id=environment_id,
            harness=harness,
            last_message_preview=last_message_preview,
            owner=owner,
            owner_name=owner_name,
            session_close_reason=session_close_reason,
            session_status=session_status,
            binding_constraint=binding_constraint,
        )

        envelope_task_view_data.additional_properties = d
        return envelope_task_view_data

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
