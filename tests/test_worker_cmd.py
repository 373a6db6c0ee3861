"""``ke worker``: what it offers to the cluster, and how it refuses a device this host does not have."""

from __future__ import annotations

import json
from pathlib import Path


def test_dry_run_offers_the_target_as_a_custom_resource(ke) -> None:
    result = ke("worker", "--hw", "mtia-v3", "--hw", "mtia-v2i", "--slots", "3", "--ray-address", "10.0.0.1:6379",
                "--dry-run")
    assert result.returncode == 0, result.stderr
    line = result.stdout.strip()
    assert line.startswith("ray start --address=10.0.0.1:6379") and line.endswith("--block")
    resources = json.loads(line.split("--resources=", 1)[1].split(" --", 1)[0].strip("'"))
    assert resources == {"hw:mtia-v3": 3, "hw:mtia-v2i": 3}
    assert "--num-gpus" not in line


def test_simulated_device_target_needs_no_device(ke) -> None:
    result = ke("worker", "--hw", "h100", "--simulate", "--ray-address", "10.0.0.1:6379", "--dry-run",
                "--no-block")
    assert result.returncode == 0, result.stderr
    assert '"hw:h100": 1' in result.stdout and "--block" not in result.stdout


def test_device_target_absent_is_refused(ke, tmp_path: Path) -> None:
    result = ke("worker", "--hw", "h100", "--ray-address", "10.0.0.1:6379")
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "no NVIDIA H100" in result.stderr and "--simulate" in result.stderr


def test_unknown_target_and_bad_slots(ke) -> None:
    unknown = ke("worker", "--hw", "tpu9", "--ray-address", "10.0.0.1:6379")
    assert unknown.returncode == 2 and "unknown hardware target 'tpu9'" in unknown.stderr
    slots = ke("worker", "--hw", "cpu", "--slots", "0", "--ray-address", "10.0.0.1:6379")
    assert slots.returncode == 2 and "--slots must be at least 1" in slots.stderr
