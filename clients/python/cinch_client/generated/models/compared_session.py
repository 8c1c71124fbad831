from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.compared_session_diffstat_type_0 import ComparedSessionDiffstatType0
    from ..models.session import Session


T = TypeVar("T", bound="ComparedSession")


@_attrs_define
class ComparedSession:
    """One session in a comparison.

    Attributes:
        duration_ms (int): Those turns' time together, in milliseconds.
        session (Session): A session.
        turns (int): Its own turns that ended (a fork's inherited ones aside).
        diffstat (ComparedSessionDiffstatType0 | None | Unset): What its tree changed since the sessions' common base
            (`files_changed`, at most 30 listed, `total_files`, `insertions`,
            `deletions`); null without a tree on this node.
        last_reply (None | str | Unset): The last thing its agent said.
        tree (None | str | Unset): The checkpoint standing for its work tree: its latest end checkpoint
            (a fork with no turn of its own yet: the one it was forked at).
    """

    duration_ms: int
    session: Session
    turns: int
    diffstat: ComparedSessionDiffstatType0 | None | Unset = UNSET
    last_reply: None | str | Unset = UNSET
    tree: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        from ..models.compared_session_diffstat_type_0 import (
            ComparedSessionDiffstatType0,
        )

        duration_ms = self.duration_ms

        session = self.session.to_dict()

        turns = self.turns

        diffstat: dict[str, Any] | None | Unset
        if isinstance(self.diffstat, Unset):
            diffstat = UNSET
        elif isinstance(self.diffstat, ComparedSessionDiffstatType0):
            diffstat = self.diffstat.to_dict()
        else:
            diffstat = self.diffstat

        last_reply: None | str | Unset
        if isinstance(self.last_reply, Unset):
            last_reply = UNSET
        else:
            last_reply = self.last_reply

        tree: None | str | Unset
        if isinstance(self.tree, Unset):
            tree = UNSET
        else:
            tree = self.tree

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "duration_ms": duration_ms,
                "session": session,
                "turns": turns,
            }
        )
        if diffstat is not UNSET:
            field_dict["diffstat"] = diffstat
        if last_reply is not UNSET:
            field_dict["last_reply"] = last_reply
        if tree is not UNSET:
            field_dict["tree"] = tree

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.compared_session_diffstat_type_0 import (
            ComparedSessionDiffstatType0,
        )
        from ..models.session import Session

        d = dict(src_dict)
        duration_ms = d.pop("duration_ms")

        session = Session.from_dict(d.pop("session"))

        turns = d.pop("turns")

        def _parse_diffstat(
            data: object,
        ) -> ComparedSessionDiffstatType0 | None | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            try:
                if not isinstance(data, dict):
                    raise TypeError()
                diffstat_type_0 = ComparedSessionDiffstatType0.from_dict(data)

                return diffstat_type_0
            except (TypeError, ValueError, AttributeError, KeyError):
                pass
            return cast(ComparedSessionDiffstatType0 | None | Unset, data)

        diffstat = _parse_diffstat(d.pop("diffstat", UNSET))

        def _parse_last_reply(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        last_reply = _parse_last_reply(d.pop("last_reply", UNSET))

        def _parse_tree(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        tree = _parse_tree(d.pop("tree", UNSET))

        compared_session = cls(
            duration_ms=duration_ms,
            session=session,
            turns=turns,
            diffstat=diffstat,
            last_reply=last_reply,
            tree=tree,
        )

        compared_session.additional_properties = d
        return compared_session

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
