from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

T = TypeVar("T", bound="Pushed")


@_attrs_define
class Pushed:
    """A session's branch, pushed.

    Attributes:
        branch (str): The session's branch.
        pushed_as (str): The name it has in the repository it was pushed to.
        repository (str): The repository it was pushed to: the environment's (credentials
            left out).
        uncommitted_changes (bool): Whether the work tree has changes no commit holds yet: they were
            not pushed (commit them first).
        pull_request_url (None | str | Unset): The page that opens a pull request of it, where the repository is
            on github.com, gitlab.com, bitbucket.org or codeberg.org.
    """

    branch: str
    pushed_as: str
    repository: str
    uncommitted_changes: bool
    pull_request_url: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        branch = self.branch

        pushed_as = self.pushed_as

        repository = self.repository

        uncommitted_changes = self.uncommitted_changes

        pull_request_url: None | str | Unset
        if isinstance(self.pull_request_url, Unset):
            pull_request_url = UNSET
        else:
            pull_request_url = self.pull_request_url

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "branch": branch,
                "pushed_as": pushed_as,
                "repository": repository,
                "uncommitted_changes": uncommitted_changes,
            }
        )
        if pull_request_url is not UNSET:
            field_dict["pull_request_url"] = pull_request_url

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        branch = d.pop("branch")

        pushed_as = d.pop("pushed_as")

        repository = d.pop("repository")

        uncommitted_changes = d.pop("uncommitted_changes")

        def _parse_pull_request_url(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        pull_request_url = _parse_pull_request_url(d.pop("pull_request_url", UNSET))

        pushed = cls(
            branch=branch,
            pushed_as=pushed_as,
            repository=repository,
            uncommitted_changes=uncommitted_changes,
            pull_request_url=pull_request_url,
        )

        pushed.additional_properties = d
        return pushed

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
