#!/usr/bin/env bash
# Times lowered recurrence drafts against eager (cuDNN) and the static torch.compile with `ke eval`, one draft at a
# time (benchmarks/results/recurrence_h100.md). Repo root on the GPU host, wheels in .whl/, KernelBench problems
# in .kb/ (a copy of ../shared/kernelbench, carried, never committed), drafts in .drafts/ lowered beforehand here:
#   python -c "from kernelevolve.lowering import lower_spec; open('.drafts/gru42.py', 'w').write(
#       lower_spec('.kb/level3/42_GRUBidirectionalHidden.py', 'h100'))"
#   SET='gru42:42_GRUBidirectionalHidden lstm36:36_LSTMHn' bash benchmarks/recurrence_gpu.sh   # draft:problem
# Each draft's JSON verdict goes to $OUT/<draft>.json; one line per draft (and its case) to stdout.
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
export PYTHONPATH=/tmp/site:$PWD KE_EXECUTOR=local
out=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)"
for f in ${SET:?name the drafts: SET='draft:problem ...'}; do
  d=${f%%:*}; p=${f#*:}
  timeout "${LIMIT:-110}" python3 -m kernelevolve.cli.main eval --op ".kb/level3/$p.py" --hw h100 ".drafts/$d.py" \
    --json --state-dir /tmp/st > "$out/$d.json" 2> "$out/$d.err"
  python3 - "$out/$d.json" "$d" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except Exception as exc:  # noqa: BLE001 - a timeout or crash leaves no verdict: say so, go on
    print(sys.argv[2], "no result:", exc)
    sys.exit()
print(sys.argv[2], r["status"], r["reason"][:150], "vs eager", r.get("speedup_vs_eager"),
      "vs compile", r.get("speedup_vs_compile"), "eval s", r.get("eval_seconds"))
for c in r.get("cases", []):
    print("  ", {k: v for k, v in c.items() if isinstance(v, (int, float, str)) and k != "name"})
PY
done
