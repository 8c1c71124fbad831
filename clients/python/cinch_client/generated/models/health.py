from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

from ..models.health_status import HealthStatus, check_health_status

if TYPE_CHECKING:
    from ..models.database_health import DatabaseHealth
    from ..models.disk_health import DiskHealth
    from ..models.drivers_health import DriversHealth
    from ..models.sandbox_health import SandboxHealth


T = TypeVar("T", bound="Health")


@_attrs_define
class Health:
    """Whether the server can serve.

    Attributes:
        database (DatabaseHealth): The database's state.
        disk (DiskHealth): The disk of cinch's home, where turns, workspaces and (by default) the
            database are kept.
        drivers (DriversHealth): The drivers' state.
        sandbox (SandboxHealth): The sandbox's state.
        status (HealthStatus): The server's state as a whole.
        version (str): cinch's version.
    """

    database: DatabaseHealth
    disk: DiskHealth
    drivers: DriversHealth
    sandbox: SandboxHealth
    status: HealthStatus
    version: str
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        database = self.database.to_dict()

        disk = self.disk.to_dict()

        drivers = self.drivers.to_dict()

        sandbox = self.sandbox.to_dict()

        status: str = self.status

        version = self.version

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "database": database,
                "disk": disk,
                "drivers": drivers,
                "sandbox": sandbox,
                "status": status,
                "version": version,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        from ..models.database_health import DatabaseHealth
        from ..models.disk_health import DiskHealth
        from ..models.drivers_health import DriversHealth
        from ..models.sandbox_health import SandboxHealth

        d = dict(src_dict)
        database = DatabaseHealth.from_dict(d.pop("database"))

        disk = DiskHealth.from_dict(d.pop("disk"))

        drivers = DriversHealth.from_dict(d.pop("drivers"))

        sandbox = SandboxHealth.from_dict(d.pop("sandbox"))

        status = check_health_status(d.pop("status"))

        version = d.pop("version")

        health = cls(
            database=database,
            disk=disk,
            drivers=drivers,
            sandbox=sandbox,
            status=status,
            version=version,
        )

        health.additional_properties = d
        return health

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
