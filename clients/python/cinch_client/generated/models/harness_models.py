from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar, cast

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..types import UNSET, Unset

if TYPE_CHECKING:
    from ..models.server_credential import ServerCredential


T = TypeVar("T", bound="HarnessModels")


@_attrs_define
class HarnessModels:
    """
    Attributes:
        credential (ServerCredential): Whether every server turn of a harness has a credential, whatever its
            environment, and how to give it one.
        display_name (str): What people call it.
        efforts (list[str]): The harness's effort vocabulary.
        harness (str): The harness, as a request's `harness` names it.
        models (list[str]): Model ids, exactly as a request's `model` takes them; empty when any id goes.
        default_effort (None | str | Unset): The effort used when a request names none.
        default_model (None | str | Unset): The model used when a request names none.
    """

    credential: ServerCredential
    display_name: str
    efforts: list[str]
    harness: str
    models: list[str]
    default_effort: None | str | Unset = UNSET
    default_model: None | str | Unset = UNSET
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        credential = self.credential.to_dict()

        display_name = self.display_name

        efforts = self.efforts

        harness = self.harness

        models = self.models

        default_effort: None | str | Unset
        if isinstance(self.default_effort, Unset):
            default_effort = UNSET
        else:
            default_effort = self.default_effort

        default_model: None | str | Unset
        if isinstance(self.default_model, Unset):
            default_model = UNSET
        else:
            default_model = self.default_model

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "credential": credential,
                "display_name": display_name,
                "efforts": efforts,
                "harness": harness,
                "models": models,
            }
        )
        if default_effort is not UNSET:
            field_dict["default_effort"] = default_effort
        if default_model is not UNSET:
            field_dict["default_model"] = default_model

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.server_credential import ServerCredential

        d = dict(src_dict)
        credential = ServerCredential.from_dict(d.pop("credential"))

        display_name = d.pop("display_name")

        efforts = cast(list[str], d.pop("efforts"))

        harness = d.pop("harness")

        models = cast(list[str], d.pop("models"))

        def _parse_default_effort(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        default_effort = _parse_default_effort(d.pop("default_effort", UNSET))

        def _parse_default_model(data: object) -> None | str | Unset:
            if data is None:
                return data
            if isinstance(data, Unset):
                return data
            return cast(None | str | Unset, data)

        default_model = _parse_default_model(d.pop("default_model", UNSET))

        harness_models = cls(
            credential=credential,
            display_name=display_name,
            efforts=efforts,
            harness=harness,
            models=models,
            default_effort=default_effort,
            default_model=default_model,
        )

        harness_models.additional_properties = d
        return harness_models

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
