#!/usr/bin/env bash
# One device-machine session: the full `ke` CLI on a GPU. Usage (repo root, on the GPU host):
#   bash benchmarks/gpu_session.sh OUT_DIR [ops...]
# Env: BUDGET (12), STRATEGY (greedy), CONCURRENCY (1), SKIP_EVAL=1 to skip the ncu eval of the conv1d seed.
# Needs duckdb and structlog wheels in .whl/ when the host lacks them (see the device README).
set -uo pipefail
out=${1:?out dir}; shift
ops=${*:-softmax}
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site:$PWD
fi
export PYTHONUNBUFFERED=1 KE_STATE_DIR=/tmp/ke-state
ke() { python3 -m kernelevolve.cli.main "$@"; }
hw=$(python3 -c 'from interpreters.targets import load_targets, is_present
print(next(t.name for t in load_targets().values() if t.needs_device and is_present(t)))')
echo "target: $hw"
ke hw list --json > "$out/hw_list.json"
if [ -z "${SKIP_EVAL:-}" ]; then
  ke eval --op conv1d --hw "$hw" knowledge_base/code_samples/conv1d.py --ncu --json > "$out/eval_conv1d_seed.json"
  echo "eval rc=$?"
fi
for op in $ops; do
  budget=${BUDGET:-12}
  ke search --op "$op" --hw "$hw" --strategy "${STRATEGY:-greedy}" --budget "$budget" \
    --concurrency "${CONCURRENCY:-1}" --json > "$out/search_$op.json" 2> "$out/search_$op.log"
  echo "search $op rc=$?"
  run=$(python3 -c "import json;print(json.load(open('$out/search_$op.json'))['run_id'])")
  ke show "$run" --tree > "$out/tree_$op.txt"
  ke show "$run" --json > "$out/show_$op.json"
  cat "$out/tree_$op.txt"
done
