from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, TypeVar

from attrs import define as _attrs_define
from attrs import field as _attrs_field

T = TypeVar("T", bound="SandboxView")


@_attrs_define
class SandboxView:
    """How tenants' processes are contained.

    Attributes:
        allowed_hosts (bool): Environments may limit the network to listed hosts (`allowed_hosts`).
        enforced (bool): Whether they run sandboxed; false only under `--no-sandbox`.
        filesystem (bool): Files beyond the workspace, agent home and TMPDIR are out of reach.
        landlock_abi (int): The kernel's Landlock ABI (0: none).
        memory_limit (bool): Memory per turn is capped by a cgroup.
        own_proc (bool): Each turn runs in a PID namespace with a /proc of its own processes,
            so `ps` works inside a turn (droid needs it to run commands).
        process_limit (bool): Processes per turn are capped by a cgroup.
        scoped_signals_and_sockets (bool): Signals to and abstract sockets of processes outside are refused.
        tcp_ports (bool): Environments may limit outbound TCP to listed ports.
    """

    allowed_hosts: bool
    enforced: bool
    filesystem: bool
    landlock_abi: int
    memory_limit: bool
    own_proc: bool
    process_limit: bool
    scoped_signals_and_sockets: bool
    tcp_ports: bool
    additional_properties: dict[str, Any] = _attrs_field(init=False, factory=dict)

    def to_dict(self) -> dict[str, Any]:
        allowed_hosts = self.allowed_hosts

        enforced = self.enforced

        filesystem = self.filesystem

        landlock_abi = self.landlock_abi

        memory_limit = self.memory_limit

        own_proc = self.own_proc

        process_limit = self.process_limit

        scoped_signals_and_sockets = self.scoped_signals_and_sockets

        tcp_ports = self.tcp_ports

        field_dict: dict[str, Any] = {}
        field_dict.update(self.additional_properties)
        field_dict.update(
            {
                "allowed_hosts": allowed_hosts,
                "enforced": enforced,
                "filesystem": filesystem,
                "landlock_abi": landlock_abi,
                "memory_limit": memory_limit,
                "own_proc": own_proc,
                "process_limit": process_limit,
                "scoped_signals_and_sockets": scoped_signals_and_sockets,
                "tcp_ports": tcp_ports,
            }
        )

        return field_dict

    @classmethod
    def from_dict(cls, src_dict: Mapping[str, Any]) -> Self:
        d = dict(src_dict)
        allowed_hosts = d.pop("allowed_hosts")

        enforced = d.pop("enforced")

        filesystem = d.pop("filesystem")

        landlock_abi = d.pop("landlock_abi")

        memory_limit = d.pop("memory_limit")

        own_proc = d.pop("own_proc")

        process_limit = d.pop("process_limit")

        scoped_signals_and_sockets = d.pop("scoped_signals_and_sockets")

        tcp_ports = d.pop("tcp_ports")

        sandbox_view = cls(
            allowed_hosts=allowed_hosts,
            enforced=enforced,
            filesystem=filesystem,
            landlock_abi=landlock_abi,
            memory_limit=memory_limit,
            own_proc=own_proc,
            process_limit=process_limit,
            scoped_signals_and_sockets=scoped_signals_and_sockets,
            tcp_ports=tcp_ports,
        )

        sandbox_view.additional_properties = d
        return sandbox_view

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
