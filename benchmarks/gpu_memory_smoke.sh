# Four ke eval runs on one GPU through the memory-bounded evaluator: device_memory and admission per node
# (issue #28 smoke check). Repo root on the GPU host, wheels in .whl/: bash benchmarks/gpu_memory_smoke.sh
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=/tmp/site:$PWD KE_EXECUTOR=local
C=tests/adversarial/candidates
for pair in "swish $C/honest__swish_autotune.py" "swish $C/output_caching__memo_version.py" "swish $C/seed_dependent__first_seed_only.py" "tests/specs/kernelbench_big/swish.py $C/honest__swish_autotune.py"; do
  set -- $pair
  python3 -m kernelevolve.cli.main eval --op $1 --hw h100 --json $2 --state-dir /tmp/st > /tmp/r.json 2>/tmp/e.txt
  python3 - "$1" "$2" <<'PY'
import json,sys
try: r=json.load(open('/tmp/r.json'))
except Exception as e: print(sys.argv[1:], 'no json', open('/tmp/e.txt').read()[-400:]); sys.exit()
r=r.get('result',r)
print(sys.argv[1], sys.argv[2].split('/')[-1], r.get('status'), (r.get('reason') or '')[:150], 'fit', r.get('fitness'), 'vs_eager', r.get('speedup_vs_eager'), json.dumps((r.get('extra') or {}).get('device_memory')), json.dumps((r.get('extra') or {}).get('admission')))
PY
done
