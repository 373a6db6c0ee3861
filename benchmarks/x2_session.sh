#!/usr/bin/env bash
# One nvidia-h100-x2 (or any multi-GPU) lease for issues #15 and #16, in the background so that each device
# call stays under its 10-minute limit. Repo root, on the GPU host, with duckdb/structlog wheels in .whl/:
#   bash benchmarks/x2_session.sh start        # install wheels, start everything detached, return
#   WAIT=500 bash benchmarks/x2_session.sh poll   # wait up to WAIT s, copy finished results to $OUT
#   STOP=1 bash benchmarks/x2_session.sh poll     # also stop the sweep and tar its (resumable) state to $OUT
#   SWEEP_ONLY=1 bash benchmarks/x2_session.sh start   # the any-op sweep alone (no throughput rounds)
#   ADV=1 SWEEP_ONLY=1 BUDGET=4 CONC=8 bash benchmarks/x2_session.sh start   # the adversarial corpus through
#     ke eval first (benchmarks/adversarial_gpu.py), then the any-op sweep at budget 4
#   ONLY='level3/*' ... start   # the sweep over some problems only (any_op_sweep.py --only)
#   KE_COMMIT=<sha> ... start   # the commit the result files name (a device copy's git HEAD can be stale)
#   CORPUS=.kb ONLY='level1/*,level2/*' ... start   # another problem folder (KernelBench copied to .kb/, carried)
#   TP_ONLY=1 TP_PLAN="2:16 1:8 2:16 P:8" bash benchmarks/x2_session.sh start   # throughput runs alone
#     (GPUS:SLOTS; P:SLOTS runs one separate search per GPU at the same time)
# What it runs: a warm-up search over every GPU (so no measured set-up pays the cold Triton/Inductor caches),
# then softmax throughput alternating one GPU and every GPU (interleaved: eval_throughput.py), then the
# any-op sweep at budget 8 over every GPU (resumes from .probe/anyop_state.tgz if that was carried).
set -uo pipefail
work=/tmp/ke-x2; tp=$work/tp; state=$work/anyop
# the target whose device_match names the GPU present (an nvidia-h100-x2 call may be given H200s)
hw=h100; nvidia-smi -L 2>/dev/null | grep -q H200 && hw=h200
case "${1:-}" in
start)
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  mkdir -p "$tp" "$work/src"; nvidia-smi --query-gpu=index,name,driver_version --format=csv
  # run from a snapshot: every later device call copies the working tree again, which must not change the code
  # under a running sweep (its fork servers and workers import it afresh)
  tar --exclude=./.git --exclude=./.whl -cf - . | tar -xf - -C "$work/src"
  (cd "$work/src" && SWEEP_ONLY=${SWEEP_ONLY:-0} setsid nohup bash benchmarks/x2_session.sh run > "$work/run.log" 2>&1 \
    < /dev/null &)
  echo "started" ;;
run)
  export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
  gpus=$(python3 -c 'import torch; print(torch.cuda.device_count())')
  throughput() { python3 benchmarks/eval_throughput.py --op softmax --budget 120 "$@"; }
  if [ "${SWEEP_ONLY:-0}" != 1 ]; then
  # TP_PLAN: runs in order, each GPUS:SLOTS; the first is a warm-up that compiles every variant's kernels
  plan=${TP_PLAN:-"$gpus:$((8 * gpus)) 1:8 $gpus:$((8 * gpus)) 1:8 $gpus:$((8 * gpus))"}; n=0
  for run in $plan; do
    g=${run%%:*}; c=${run##*:}; label="${g}gpu-c$c-$n"; [ $n = 0 ] && label="warmup-${g}gpu-c$c"
    if [ "$g" = P ]; then  # P:SLOTS: one independent search per GPU at once (is the slowdown per host?)
      for i in $(seq 0 $((gpus - 1))); do
        CUDA_VISIBLE_DEVICES=$i throughput --concurrency "$c" --label "par$i-c$c-$n" --out "$tp/par$i-c$c-$n.json" \
          > "$tp/par$i-c$c-$n.log" 2>&1 &
      done; wait
      for i in $(seq 0 $((gpus - 1))); do
        echo "par$i-c$c-$n $(grep -m1 nodes_per_minute "$tp/par$i-c$c-$n.log")" >> "$tp/progress"
      done; n=$((n + 1)); continue
    fi
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) throughput --concurrency "$c" --label "$label" \
      --out "$tp/$label.json" > "$tp/$label.log" 2>&1
    echo "$label $(grep -m1 nodes_per_minute "$tp/$label.log")" >> "$tp/progress"; n=$((n + 1))
  done
  fi
  touch "$tp/done"
  [ "${TP_ONLY:-0}" = 1 ] && { echo "rc 0" > "$work/sweep_done"; exit 0; }
  if [ "${ADV:-0}" = 1 ]; then
    python3 benchmarks/adversarial_gpu.py --jobs 8 --timeout 60 --out "$work/adversarial_$hw" > "$work/adv.log" 2>&1
    echo "adversarial rc $?" >> "$tp/progress"
  fi
  if [ -f .probe/anyop_state.tgz ] && [ ! -d "$state" ]; then tar -xzf .probe/anyop_state.tgz -C "$work"; fi
  python3 benchmarks/any_op_sweep.py --hw $hw --budget ${BUDGET:-8} --concurrency ${CONC:-$((12 * gpus))} --state-dir "$state" \
    ${ONLY:+--only "$ONLY"} ${CORPUS:+--corpus "$CORPUS"} --write "$work/any_op_$hw" > "$work/sweep.log" 2>&1
  echo "rc $?" > "$work/sweep_done" ;;
poll)
  end=$((SECONDS + ${WAIT:-0}))
  while [ ! -f "$work/sweep_done" ] && [ $SECONDS -lt $end ]; do sleep 5; done
  cp "$tp"/*.json "$work"/adversarial_* "${OUT:?}/" 2>/dev/null; cat "$tp/progress" 2>/dev/null
  tail -2 "$work/sweep.log" 2>/dev/null
  nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader
  if [ "${STOP:-0}" = 1 ] && [ ! -f "$work/sweep_done" ]; then
    pkill -f any_op_sweep.py; pkill -f kernelevolve.cli.main; sleep 8; pkill -9 -f kernelevolve
    tar -czf "$OUT/anyop_state.tgz" -C "$work" anyop
    PYTHONPATH=/tmp/site python3 benchmarks/any_op_sweep.py --hw $hw --budget ${BUDGET:-8} --state-dir "$state" \
      ${ONLY:+--only "$ONLY"} ${CORPUS:+--corpus "$CORPUS"} --matrix-only --write "$OUT/any_op_${hw}_partial" \
      > /dev/null 2>&1
  fi
  cp "$work"/any_op_$hw.* "$OUT/" 2>/dev/null; ls "$OUT" ;;
*) echo "usage: $0 start|poll (run: what start detaches)" >&2; exit 2 ;;
esac
