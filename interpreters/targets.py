"""Hardware targets are data: one TOML record per chip under ``interpreters/targets/``.

Adding hardware means adding a record (and its knowledge-base folder), not code.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

TARGETS_DIR = Path(__file__).resolve().parent / "targets"
INTERPRETERS = ("cpu", "nvidia", "amd", "mtia-sim")


@dataclass(frozen=True)
class Target:
    name: str
    vendor: str
    interpreter: str
    description: str = ""
    device_match: tuple[str, ...] = ()
    compute_units: int = 1
    warp_size: int = 32
    onchip_memory_per_unit_kib: float = 0.0
    l2_cache_mib: float = 0.0
    dram_bandwidth_gbps: float = 0.0
    launch_overhead_us: float = 0.0
    peak_tflops: dict[str, float] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def needs_device(self) -> bool:
        return self.interpreter in ("nvidia", "amd")

    @property
    def always_simulated(self) -> bool:
        return self.interpreter == "mtia-sim"

    def runs_on_device(self, simulate: bool) -> bool:
        """Whether evaluating on this target (with or without ``--simulate``) needs a real GPU."""
        return self.needs_device and not simulate

    def checked_cases(self, simulate: bool) -> str:
        """The case set candidates are checked on: ``prod`` on a real GPU, ``test`` on the CPU interpreter, and
        ``sim`` when simulated (a test case that keeps the production constructor args where it can). The one
        place this is decided: the lowering drafts for, and the executor checks on, the same set."""
        if self.runs_on_device(simulate):
            return "prod"
        return "test" if self.interpreter == "cpu" else "sim"


class UnknownTarget(KeyError):
    pass


def load_targets(directory: Path = TARGETS_DIR) -> dict[str, Target]:
    targets = {}
    for path in sorted(directory.glob("*.toml")):
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        known = {k: data.pop(k) for k in list(data) if k in Target.__dataclass_fields__ and k != "extra"}
        known["device_match"] = tuple(known.get("device_match", ()))
        if known.get("interpreter") not in INTERPRETERS:
            raise ValueError(f"{path.name}: interpreter must be one of {INTERPRETERS}")
        targets[known["name"]] = Target(**known, extra=data)
    return targets


def get_target(name: str) -> Target:
    targets = load_targets()
    if name not in targets:
        raise UnknownTarget(f"unknown hardware target '{name}' (known: {', '.join(sorted(targets))})")
    return targets[name]


def present_devices() -> list[str]:
    """Names of the accelerators this process can see (CUDA or ROCm through PyTorch)."""
    try:
        import torch
    except ImportError:  # pragma: no cover
        return []
    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def is_present(target: Target, devices: list[str] | None = None) -> bool:
    if target.interpreter == "cpu":
        return True
    if not target.needs_device:
        return False
    import torch

    is_hip = getattr(torch.version, "hip", None) is not None
    if (target.interpreter == "amd") != is_hip:
        return False
    names = present_devices() if devices is None else devices
    return any(m.lower() in n.lower() for n in names for m in target.device_match)
