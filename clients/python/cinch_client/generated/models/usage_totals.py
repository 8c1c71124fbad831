from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="UsageTotals")


@_attrs_define
class UsageTotals:
    """The tokens and cost of some turns.

    Attributes:
        cached_input_tokens (int): Prompt tokens read from the providers' caches.
        cost_usd (float): What the turns with a known cost cost, in US dollars.
        estimated_cost_usd (float): The part of `cost_usd` cinch estimated from its price table.
        input_tokens (int): Prompt tokens, cached ones included.
        output_tokens (int): Tokens the models wrote.
        reported_cost_usd (float): The part of `cost_usd` the harnesses reported.
        turns (int): Turns that have ended.
        turns_without_cost (int): Ended turns with no known cost (no usage reported, or a model cinch
            does not price): `cost_usd` leaves them out.
    """

    cached_input_tokens: int
    cost_usd: float
    estimated_cost_usd: float
    input_tokens: int
    output_tokens: int
    reported_cost_usd: float
    turns: int
    turns_without_cost: int
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        cached_input_tokens = self.cached_input_tokens

        cost_usd = self.cost_usd

        estimated_cost_usd = self.estimated_cost_usd

        input_tokens = self.input_tokens

        output_tokens = self.output_tokens

        reported_cost_usd = self.reported_cost_usd

        turns = self.turns

        turns_without_cost = self.turns_without_cost

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "cached_input_tokens": cached_input_tokens,
                "cost_usd": cost_usd,
                "estimated_cost_usd": estimated_cost_usd,
                "input_tokens": input_tokens,
                "output_tokens": output_tokens,
                "reported_cost_usd": reported_cost_usd,
                "turns": turns,
                "turns_without_cost": turns_without_cost,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        cached_input_tokens = d.pop("cached_input_tokens")

        cost_usd = d.pop("cost_usd")

        estimated_cost_usd = d.pop("estimated_cost_usd")

        input_tokens = d.pop("input_tokens")

        output_tokens = d.pop("output_tokens")

        reported_cost_usd = d.pop("reported_cost_usd")

        turns = d.pop("turns")

        turns_without_cost = d.pop("turns_without_cost")

        usage_totals = cls(
            cached_input_tokens=cached_input_tokens,
            cost_usd=cost_usd,
            estimated_cost_usd=estimated_cost_usd,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            reported_cost_usd=reported_cost_usd,
            turns=turns,
            turns_without_cost=turns_without_cost,
        )

        usage_totals.additional_properties = d
        return usage_totals

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
