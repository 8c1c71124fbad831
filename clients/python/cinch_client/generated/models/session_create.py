from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.approval_policy import ApprovalPolicy


T = TypeVar("T", bound="SessionCreate")


@_attrs_define
class SessionCreate:
    """A session to start under the task; every field is optional. Its harness,
    model and effort come from the task's agent's current settings.

        Attributes:
            approvals (ApprovalPolicy | None | Unset):
            auto_commit (bool | None | Unset): Commit what each turn changed on the branch (default false).
            base_branch (None | str | Unset): The branch to start from (default: the repository's HEAD): a git
                branch name the environment's repository has, locally or as `origin/<branch>`.
            branch_name (None | str | Unset): Its branch (default: `cinch/<session id>`): a git branch name of
                letters, digits and `_ - .`, parts separated by `/`.
            environment_id (None | str | Unset): Its environment (default: the task's).
            prompt (None | str | Unset): Its first message.
            title (None | str | Unset): Its title (default: the task's).
    """

    approvals: ApprovalPolicy | None | Unset = UNSET
    auto_commit: bool | None | Unset = UNSET
    base_branch: None | str | Unset = UNSET
    branch_name: None | str | Unset = UNSET
    environment_id: None | str | Unset = UNSET
    prompt: None | str | Unset = UNSET
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

        auto_commit: bool | None | Unset
        if isinstance(self.auto_commit, Unset):
            auto_commit = UNSET
        else:
            auto_commit = self.auto_commit

        base_branch: None | str | Unset
        if isinstance(self.base_branch, Unset):
            base_branch = UNSET
        else:
            base_branch = self.base_branch

        branch_name: None | str | Unset
        if isinstance(self.branch_name, Unset):
            branch_name = UNSET
        else:
            branch_name = self.branch_name

        environment_id: None | str | Unset
        if isinstance(self.environment_id, Unset):
            environment_id = UNSET
        else:
            environment_id = self.environment_id

        prompt: None | str | Unset
        if isinstance(self.prompt, Unset):
            prompt = UNSET
        else:
            prompt = self.prompt

        title: None | str | Unset
        if isinstance(self.title, Unset):
            title = UNSET
        else:
            title = self.title

        field_dict: dict[str, Any] = {}

        field_dict.update({})
        if approvals is not UNSET:
            field_dict["approvals"] = approvals
        if auto_commit is not UNSET:
            field_dict["auto_commit"] = auto_commit
        if base_branch is not UNSET:
            field_dict["base_branch"] = base_branch
        if branch_name is not UNSET:
            field_dict["branch_name"] = branch_name
        if environment_id is not UNSET:
            field_dict["environment_id"] = environment_id
        if prompt is not UNSET:
            field_dict["prompt"] = prompt
        if title is not UNSET:
            field_dict["title"] = title

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.approval_policy import ApprovalPolicy

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

        def _parse_auto_commit(data: object) -> bool | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(bool | None | Unset, data)

        auto_commit = _parse_auto_commit(d.pop("auto_commit", UNSET))

        def _parse_base_branch(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        base_branch = _parse_base_branch(d.pop("base_branch", UNSET))

        def _parse_branch_name(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        branch_name = _parse_branch_name(d.pop("branch_name", UNSET))

        def _parse_environment_id(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        environment_id = _parse_environment_id(d.pop("environment_id", UNSET))

        def _parse_prompt(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        prompt = _parse_prompt(d.pop("prompt", UNSET))

        def _parse_title(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        title = _parse_title(d.pop("title", UNSET))

        session_create = cls(
            approvals=approvals,
            auto_commit=auto_commit,
            base_branch=base_branch,
            branch_name=branch_name,
            environment_id=environment_id,
            prompt=prompt,
            title=title,
        )

        return session_create
