"""``ke hw list``: the targets this installation knows and which of them are present here."""

from __future__ import annotations

import dataclasses

import click

from kernelevolve.cli.common import emit_json, json_option
from kernelevolve.errors import UserError


@click.group("hw")
def hw_group() -> None:
    """Hardware targets."""


@hw_group.command("list")
@click.option("--ray-address", default=None, help="Also list the evaluation slots this Ray cluster offers.")
@json_option
def hw_list(ray_address: str | None, as_json: bool) -> None:
    from interpreters.targets import is_present, load_targets, present_devices

    cluster = _cluster_slots(ray_address) if ray_address else None
    devices = present_devices()
    rows = []
    for target in load_targets().values():
        row = dataclasses.asdict(target)
        row["device_match"] = list(target.device_match)
        row["present"] = is_present(target, devices)
        row["simulated_only"] = target.always_simulated
        if cluster is not None:
            row["cluster_slots"] = cluster.get(target.name, {"total": 0, "available": 0})
        rows.append(row)
    if as_json:
        emit_json({"targets": rows, "devices": devices, **({"cluster": cluster} if cluster is not None else {})})
        return
    click.echo(f"{'target':10} {'vendor':7} {'interpreter':11} {'present':8} description")
    for r in rows:
        present = "yes" if r["present"] else ("sim" if r["simulated_only"] else "no")
        click.echo(f"{r['name']:10} {r['vendor']:7} {r['interpreter']:11} {present:8} {r['description']}")
    click.echo(f"devices here: {', '.join(devices) if devices else 'none (CPU only)'}")
    if cluster is not None:
        offered = ", ".join(f"{t} {c['available']}/{c['total']} free" for t, c in sorted(cluster.items()))
        click.echo(f"cluster {ray_address}: {offered or 'no evaluation slots (start nodes with ke worker)'}")


def _cluster_slots(address: str) -> dict[str, dict[str, int]]:
    """target -> {total, available} evaluation slots of a running Ray cluster (its hw:<target> resources)."""
    from interpreters import ray_pool

    try:
        total = ray_pool.connect(address, {})
        import ray

        available = ray.available_resources()
    except ray_pool.JOIN_ERRORS as exc:
        raise UserError(ray_pool.join_error(address, exc)) from None
    offered = ray_pool.offered_targets(total)
    free = ray_pool.offered_targets(available)
    ray_pool.shutdown()
    return {t: {"total": n, "available": free.get(t, 0)} for t, n in offered.items()}
