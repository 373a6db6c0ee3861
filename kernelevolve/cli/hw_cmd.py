"""``ke hw list``: the targets this installation knows and which of them are present here."""

from __future__ import annotations

import dataclasses

import click

from kernelevolve.cli.common import emit_json, json_option


@click.group("hw")
def hw_group() -> None:
    """Hardware targets."""


@hw_group.command("list")
@json_option
def hw_list(as_json: bool) -> None:
    from interpreters.targets import is_present, load_targets, present_devices

    devices = present_devices()
    rows = []
    for target in load_targets().values():
        row = dataclasses.asdict(target)
        row["device_match"] = list(target.device_match)
        row["present"] = is_present(target, devices)
        row["simulated_only"] = target.always_simulated
        rows.append(row)
    if as_json:
        emit_json({"targets": rows, "devices": devices})
        return
    click.echo(f"{'target':10} {'vendor':7} {'interpreter':11} {'present':8} description")
    for r in rows:
        present = "yes" if r["present"] else ("sim" if r["simulated_only"] else "no")
        click.echo(f"{r['name']:10} {r['vendor']:7} {r['interpreter']:11} {present:8} {r['description']}")
    click.echo(f"devices here: {', '.join(devices) if devices else 'none (CPU only)'}")
