#!/usr/bin/env bash
# One job per GPU of a host, detached so that each device call stays under its limit: JOB=memory runs
# benchmarks/eval_memory.py (issue #28 item 1), JOB=sweep runs benchmarks/any_op_sweep.py at --concurrency 8
# per GPU (issue #28 item 7), each GPU its own share (--shard i/n), then one merged result. JOB=isolation runs
# issue #31's timing_isolation.py and eval_throughput.py (both lock modes) on GPU 0 (DEADLINE: isolation's).
# JOB=aten sweeps the ATen suite with an older tree (OLD_TREE, default .drafts/old_src) and this one, JOB=kbab
# the KernelBench problems ONLY at budget 1 the same way (issue #32, ROUNDS rounds each).
# Repo root on the GPU host, wheels in .whl/, KernelBench problems in .kb/ (a copy of ../shared/kernelbench's
# level folders, carried, never committed; einops among the wheels for the Mamba files), drafts lowered
# beforehand in .drafts/ (JOB=memory):
#   KE_COMMIT=<sha> JOB=memory bash benchmarks/per_gpu_session.sh start
#   KE_COMMIT=<sha> JOB=sweep BUDGET=2 bash benchmarks/per_gpu_session.sh start
#   ADV=1 ... start        # also the adversarial corpus (adversarial_gpu.py) on GPU 0 once its share is done
#   ONLY='level2/4_*,...' ... start   # some problems only
#   WAIT=570 bash benchmarks/per_gpu_session.sh poll   # wait up to WAIT s; results to $OUT
# The host goes back 30 s after a device call ends, taking this detached job with it: poll again at once.
set -uo pipefail
work=/tmp/ke-gpus
hw=h100; nvidia-smi -L 2>/dev/null | grep -q H200 && hw=h200
isolation() {  # issue #31 on GPU 0: softmax throughput under each lock mode, then timing alone vs busy
  # TP_LOCKS / ISO_LOCKS: the lock modes of the throughput runs and of isolation's busy arms; TP_CONC: the
  # throughput runs' slot counts; ISO_ROUNDS / ISO_PRIOR: new rounds, and an earlier run's JSON to add them to
  for lock in ${TP_LOCKS:-timing phases}; do
    for conc in ${TP_CONC:-8}; do
      KE_GPU_LOCK=$lock python3 benchmarks/eval_throughput.py --op softmax --hw $hw --budget 120 \
        --concurrency "$conc" --label "$hw-c$conc-lock-$lock" --out "$work/tp_${lock}_c$conc.json"
    done
  done
  python3 benchmarks/eval_throughput.py --summarize "$work"/tp_*.json --write "$work/eval_throughput_$hw"
  python3 benchmarks/timing_isolation.py --hw $hw --big .kb/level1/21_Sigmoid.py --rounds "${ISO_ROUNDS:-5}" \
    --locks "$(echo ${ISO_LOCKS:-timing phases} | tr ' ' ,)" --deadline "${DEADLINE:-780}" \
    ${ISO_PRIOR:+--prior "$ISO_PRIOR"} --out "$work/timing_isolation_$hw"
}
ab_rounds() {  # issue #32 on GPU 0: sweeps with an older tree (OLD_TREE) and this one, ROUNDS rounds, the order
  # swapped every round, then the per-case latency ratios (aten_lowering_ab.py). $1: a name; the rest: the
  # ke command after "--hw"-less arguments (aten-sweep, or sweep over .kb with ONLY)
  name=$1; shift
  for round in $(seq 1 "${ROUNDS:-2}"); do
    order="old new"; [ $((round % 2)) = 0 ] && order="new old"
    for label in $order; do
      tree=$PWD; [ "$label" = old ] && tree=$PWD/${OLD_TREE:-.drafts/old_src}
      (cd "$tree" && PYTHONPATH=/tmp/site:$tree python3 -m kernelevolve.cli.main "$@" --hw $hw --executor local \
        --concurrency 8 --state-dir "$work/${name}_${label}_$round" --out "$work/${name}_sweep_${hw}_${label}_$round")
      echo "$name $label round $round rc $?" >> "$work/progress"
    done
  done
  python3 benchmarks/aten_lowering_ab.py --old "$work"/${name}_sweep_${hw}_old_*.json \
    --new "$work"/${name}_sweep_${hw}_new_*.json --out "$work/${name}_lowering_ab_$hw" --labels "${LABELS:-template engine,general lowering}" --command \
    "KE_COMMIT=${KE_COMMIT:-} JOB=$JOB OLD_TREE=${OLD_TREE:-.drafts/old_src} ROUNDS=${ROUNDS:-2} ${ONLY:+ONLY='$ONLY' }bash benchmarks/per_gpu_session.sh start"
}
job() {  # $1: GPU index, $2: GPU count
  if [ "${JOB:-memory}" = isolation ]; then
    [ "$1" = 0 ] && isolation
  elif [ "${JOB:-memory}" = aten ]; then
    [ "$1" = 0 ] && ab_rounds aten aten-sweep
  elif [ "${JOB:-memory}" = kbab ]; then  # KernelBench problems ONLY, budget 1, old tree against this one
    [ "$1" = 0 ] && ab_rounds kb sweep "$PWD/.kb" --only "$ONLY" --budget 1 --timeout 600
  elif [ "${JOB:-memory}" = sweep ]; then
    python3 benchmarks/any_op_sweep.py --corpus .kb --only "${ONLY:-level1/*,level2/*}" --hw $hw \
      --budget "${BUDGET:-2}" --concurrency "${CONC:-8}" --shard "$1/$2" --state-dir "$work/state$1" \
      --write "$work/part$1"
  else
    python3 benchmarks/eval_memory.py --problems .kb --drafts .drafts --hw $hw --shard "$1/$2" \
      ${ONLY:+--only "$ONLY"} --out "$work/mem$1.jsonl"
  fi
}
case "${1:-}" in
start)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  mkdir -p "$work/src"; nvidia-smi --query-gpu=index,name,driver_version --format=csv
  tar --exclude=./.git --exclude=./.whl -cf - . | tar -xf - -C "$work/src"  # later calls must not change the code
  # poll (STOP=1) rebuilds partial matrices with the started job's selection, not its own call's defaults
  printf 'ONLY=%q\nBUDGET=%q\n' "${ONLY:-level1/*,level2/*}" "${BUDGET:-2}" > "$work/settings"
  (cd "$work/src" && JOB=${JOB:-memory} OLD_TREE=${OLD_TREE:-.drafts/old_src} LABELS=${LABELS:-template engine,general lowering} ONLY=${ONLY:-} ADV=${ADV:-0} BUDGET=${BUDGET:-2} CONC=${CONC:-8} DEADLINE=${DEADLINE:-780} ROUNDS=${ROUNDS:-2} \
    KE_COMMIT=${KE_COMMIT:-} setsid nohup bash benchmarks/per_gpu_session.sh run > "$work/run.log" 2>&1 < /dev/null &)
  echo started ;;
run)
  export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 KE_EXECUTOR=local CUDA_DEVICE_ORDER=PCI_BUS_ID
  gpus=$(nvidia-smi -L | wc -l)
  for i in $(seq 0 $((gpus - 1))); do
    (
      CUDA_VISIBLE_DEVICES=$i job "$i" "$gpus" > "$work/gpu$i.log" 2>&1
      echo "gpu $i rc $?" >> "$work/progress"
      if [ "$i" = 0 ] && [ "${ADV:-0}" = 1 ]; then
        CUDA_VISIBLE_DEVICES=0 python3 benchmarks/adversarial_gpu.py --jobs 8 --timeout 60 \
          --out "$work/adversarial_$hw" > "$work/adv.log" 2>&1
        echo "adversarial rc $?" >> "$work/progress"
      fi
    ) &
  done
  wait
  what="KE_COMMIT=${KE_COMMIT:-} JOB=${JOB:-memory} bash benchmarks/per_gpu_session.sh start (${gpus} GPUs, a share each)"
  if [ "${JOB:-memory}" = isolation ] || [ "${JOB:-memory}" = aten ] || [ "${JOB:-memory}" = kbab ]; then
    :
  elif [ "${JOB:-memory}" = sweep ]; then
    python3 benchmarks/any_op_sweep.py --merge "$work"/part*.json --write "$work/kernelbench_sweep_$hw"
  else
    python3 benchmarks/eval_memory.py --merge "$work"/mem*.jsonl --write "$work/eval_memory_$hw" --command "$what"
  fi
  touch "$work/done" ;;
poll)
  # a fresh host (the last one went back after 30 s idle) has no job: say so at once, not after WAIT seconds
  [ -f "$work/settings" ] || { echo "no job started on this host: the earlier one went back; start again" >&2; exit 3; }
  . "$work/settings"
  waited=0
  while [ ! -f "$work/done" ] && [ "$waited" -lt "${WAIT:-0}" ]; do sleep 10; waited=$((waited + 10)); done
  cat "$work/progress" 2>/dev/null; for f in "$work"/gpu*.log; do echo "$f: $(wc -l < "$f") lines"; tail -2 "$f"; done
  tail -3 "$work/adv.log" 2>/dev/null
  cp "$work"/mem*.jsonl "$work"/part*.json "$work"/eval_memory_* "$work"/kernelbench_sweep_* "$work"/adversarial_* \
    "$work"/eval_throughput_* "$work"/timing_isolation_* "$work"/tp_*.json "$work"/aten_sweep_* "$work"/*_lowering_ab_* "$work"/kb_sweep_* \
    "${OUT:-/tmp}/" 2>/dev/null
  if [ "${STOP:-0}" = 1 ] && [ ! -f "$work/done" ]; then  # partial: each share's matrix from its store, as it is
    pkill -f any_op_sweep.py; pkill -f kernelevolve.cli.main; sleep 8; pkill -9 -f kernelevolve
    for d in "$work"/state*; do i=${d##*state}
      (cd "$work/src" && PYTHONPATH=/tmp/site:$PWD python3 benchmarks/any_op_sweep.py --corpus .kb \
        --only "${ONLY:-level1/*,level2/*}" --hw $hw --budget "${BUDGET:-2}" --shard "$i/$(ls -d "$work"/state* | wc -l)" \
        --state-dir "$d" --matrix-only --write "${OUT:-/tmp}/partial$i" > /dev/null 2>&1)
    done
  fi
  [ -f "$work/done" ] && echo done ;;
*) echo "usage: $0 start|poll" >&2; exit 2 ;;
esac
