"""``ke worker --hw TARGET --ray-address ADDR``: make this host a Ray node that offers evaluation slots.

It is ``ray start`` with the custom resource ``hw:<target>`` set to the number of slots, after checking that
the device is really here, so that a search's evaluation actors for that target can only land on hosts that
can run them. Simulated targets (and ``--simulate``) need only CPUs.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import click

from kernelevolve.errors import UserError

RAY_CLI = "import sys; from ray.scripts.scripts import main; sys.argv[0] = 'ray'; main()"


@click.command("worker")
@click.option("--hw", "targets", multiple=True, required=True, help="Target to offer (repeatable).")
@click.option("--ray-address", required=True, help="Head node address, e.g. 10.0.0.1:6379.")
@click.option("--slots", type=int, default=None, help="Evaluation slots per target (default: matching devices "
              "here, or 1 for simulated and CPU targets).")
@click.option("--simulate", is_flag=True, help="Offer simulated evaluation of device targets (CPU only).")
@click.option("--block/--no-block", default=True, show_default=True, help="Stay in the foreground.")
@click.option("--dry-run", is_flag=True, help="Print the ray start command instead of running it.")
def worker_cmd(targets, ray_address, slots, simulate, block, dry_run) -> None:
    """Start a Ray node on this host that offers TARGET's evaluation slots."""
    from interpreters.pools import matching_devices
    from interpreters.targets import UnknownTarget, get_target, present_devices

    if slots is not None and slots < 1:
        raise UserError(f"--slots must be at least 1, got {slots}")
    resources: dict[str, int] = {}
    gpus = 0
    for name in targets:
        try:
            target = get_target(name)
        except UnknownTarget as exc:
            raise UserError(exc.args[0]) from None
        devices = matching_devices(target.name, simulate)
        if devices == []:
            raise UserError(f"no {target.description or target.name} on this host (devices: "
                            f"{', '.join(present_devices()) or 'none'}); use --simulate to offer simulated "
                            "evaluation")
        resources[f"hw:{target.name}"] = slots or max(1, len(devices or ()))
        gpus = max(gpus, len(devices or ()))
    command = [sys.executable, "-c", RAY_CLI, "start", f"--address={ray_address}",
               f"--resources={json.dumps(resources)}", "--disable-usage-stats"]
    if gpus:
        command.append(f"--num-gpus={gpus}")
    if block:
        command.append("--block")
    if dry_run:
        click.echo("ray " + " ".join(shlex.quote(part) for part in command[3:]))
        return
    click.echo(f"offering {', '.join(f'{k}={v}' for k, v in resources.items())} to {ray_address}", err=True)
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    proc = subprocess.run(command, env=env)
    if proc.returncode != 0:
        raise UserError(f"ray start failed with exit code {proc.returncode} (is {ray_address} a Ray head node?)")
