#!/usr/bin/env bash
# benchmarks/eval_memory.py over every GPU of one host, detached so that each device call stays under its
# limit (issue #28 item 1). Repo root on the GPU host, wheels in .whl/, KernelBench problems in .kb/ (a copy of
# ../shared/kernelbench's level folders, carried, never committed), drafts lowered beforehand in .drafts/:
#   KE_COMMIT=<sha> bash benchmarks/eval_memory_session.sh start   # one shard per GPU, then merge
#   ADV=1 ... start        # also the adversarial corpus (adversarial_gpu.py) on GPU 0 once its shard is done
#   ONLY='level2/4_*,...' ... start   # some problems only (eval_memory.py --only)
# The host goes back 30 s after a device call ends, taking this detached job with it: poll again at once.
#   WAIT=570 bash benchmarks/eval_memory_session.sh poll          # wait up to WAIT s; results to $OUT
set -uo pipefail
work=/tmp/ke-mem
hw=h100; nvidia-smi -L 2>/dev/null | grep -q H200 && hw=h200
case "${1:-}" in
start)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  mkdir -p "$work/src"; nvidia-smi --query-gpu=index,name,driver_version --format=csv
  tar --exclude=./.git --exclude=./.whl -cf - . | tar -xf - -C "$work/src"  # later calls must not change the code
  (cd "$work/src" && ONLY=${ONLY:-} ADV=${ADV:-0} KE_COMMIT=${KE_COMMIT:-} setsid nohup bash benchmarks/eval_memory_session.sh run > "$work/run.log" 2>&1 < /dev/null &)
  echo started ;;
run)
  export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 KE_EXECUTOR=local CUDA_DEVICE_ORDER=PCI_BUS_ID
  gpus=$(nvidia-smi -L | wc -l)
  for i in $(seq 0 $((gpus - 1))); do
    (
      mkdir -p "$work/locks$i"
      CUDA_VISIBLE_DEVICES=$i KE_DEVICE_LOCK_DIR=$work/locks$i python3 benchmarks/eval_memory.py --problems .kb \
        --drafts .drafts --hw $hw --shard "$i/$gpus" ${ONLY:+--only "$ONLY"} --out "$work/mem$i.jsonl" > "$work/mem$i.log" 2>&1
      echo "shard $i rc $?" >> "$work/progress"
      if [ "$i" = 0 ] && [ "${ADV:-0}" = 1 ]; then
        CUDA_VISIBLE_DEVICES=0 python3 benchmarks/adversarial_gpu.py --jobs 8 --timeout 60 \
          --out "$work/adversarial_$hw" > "$work/adv.log" 2>&1
        echo "adversarial rc $?" >> "$work/progress"
      fi
    ) &
  done
  wait
  python3 benchmarks/eval_memory.py --merge "$work"/mem*.jsonl --write "$work/eval_memory_$hw" \
    --command "KE_COMMIT=$KE_COMMIT bash benchmarks/eval_memory_session.sh start (${gpus} GPUs, one shard each)"
  touch "$work/done" ;;
poll)
  waited=0
  while [ ! -f "$work/done" ] && [ "$waited" -lt "${WAIT:-0}" ]; do sleep 10; waited=$((waited + 10)); done
  cat "$work/progress" 2>/dev/null; for f in "$work"/mem*.log; do echo "$f: $(wc -l < "$f") lines"; tail -2 "$f"; done
  tail -3 "$work/adv.log" 2>/dev/null
  cp "$work"/mem*.jsonl "$work"/eval_memory_* "$work"/adversarial_* "${OUT:-/tmp}/" 2>/dev/null
  [ -f "$work/done" ] && echo done ;;
*) echo "usage: $0 start|poll" >&2; exit 2 ;;
esac
