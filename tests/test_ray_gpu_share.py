"""Several Ray evaluation actors share a GPU, as local slots do, and lock the physical device when timing.

The cluster is a real private Ray instance that declares two GPUs (Ray schedules GPUs as resources and sets
each actor's CUDA_VISIBLE_DEVICES). The actors are placed with the evaluation actor's own options and report
through its own ``placement``; they do not build an evaluator, which would (rightly) refuse a host without
an H100. It runs in a child process because a Ray driver is process-global.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

from conftest import REPO_ROOT

_SCRIPT = r"""
import json, os, ray
from interpreters.ray_pool import actor_options, gpu_share, placement, resource_name
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
ray.init(num_cpus=1, num_gpus=2, resources={resource_name("h100"): 8}, include_dashboard=False,
         log_to_driver=False)
shares = {size: gpu_share("h100", size) for size in (1, 2, 3, 6)}

@ray.remote
class Probe:
    def where(self):
        return placement()

probes = [Probe.options(**actor_options("h100", False, shares[6])).remote() for _ in range(6)]
where = ray.get([p.where.remote() for p in probes], timeout=120)
assert "num_gpus" not in actor_options("h100", True, shares[6])  # a simulated target takes no GPU
print(json.dumps({"shares": shares, "where": where}))
ray.shutdown()
"""


def test_six_actors_share_two_gpus_three_each_and_lock_per_physical_gpu() -> None:
    env = {**os.environ, "PYTHONPATH": REPO_ROOT, "RAY_USAGE_STATS_ENABLED": "0"}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    done = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True, env=env, timeout=300,
                          cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # whole GPUs while there are enough; then 1/k so that k actors fit on each of the two
    assert report["shares"] == {"1": 1.0, "2": 1.0, "3": 0.5, "6": 0.3333}
    where = report["where"]
    assert all(len(w["gpus"]) == 1 for w in where), where  # every actor was placed on exactly one GPU
    assert Counter(w["gpus"][0] for w in where) == {"0": 3, "1": 3}
    # the timing lock follows the physical GPU: three actors per lock file, a different file per GPU
    by_gpu = {w["gpus"][0]: {x["timing_lock"] for x in where if x["gpus"] == w["gpus"]} for w in where}
    assert all(len(locks) == 1 for locks in by_gpu.values()) and by_gpu["0"] != by_gpu["1"]
    assert by_gpu["1"].pop().endswith("ke-timing-gpu-1.lock")
