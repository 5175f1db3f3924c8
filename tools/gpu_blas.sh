#!/usr/bin/env bash
# Issue #16's blas checks on one NVIDIA GPU (from the repository root, gems installed; about 3 minutes,
# at most 4.6 by its time limits; PERF_GROUPS="mm" keeps only the mm timings):
# 1. quick conformance of every blas operator (grouped_mm's overlap error and addmv's dtype mix included);
# 2. gems-perf, core suite, tools/gpu_blas.yaml: mm/addmm/bmm at 8192^3-class shapes in fp16, bf16 and fp32
#    (target >= 0.90x cuBLAS), decode mm 1x4096x4096, mv 4096x4096 and bmm 32x1024x128x1024 (target >= 0.8x
#    ATen). The first call of each shape tunes (TRITON_PRINT_AUTOTUNING=1: the chosen configs are in the log).
# Everything it writes goes to runs/blas* and, when set, $OUT.
set -uo pipefail
OUT=${OUT:-runs/blas-out}
mkdir -p "$OUT" runs
export GEMS_VENDOR=nvidia PYTHONUNBUFFERED=1
OPS=mm,bmm,addmm,baddbmm,mv,addmv,dot,vdot,addr,trace,tril,diag,diag_embed,diagonal_backward,grouped_mm
timeout 70 python -m pytest conformance --vendor nvidia --quick -n "${JOBS:-16}" -q -p no:randomly -rf \
    --ops "$OPS" --report-dir runs/blas 2>&1 | tee "$OUT/conformance.log" | grep -E "^(FAILED|ERROR)|passed|failed" | tail -40
# One perf run per group (each within its own time limit, so a finished group's numbers survive a later one's).
perf() {  # perf NAME SECONDS OPS
  TRITON_PRINT_AUTOTUNING=1 timeout "$2" python -m gems.perf --vendor nvidia --suite core --no-progress \
      --ops "$3" --shapes tools/gpu_blas.yaml --out "runs/blas-perf-$1" > "$OUT/perf-$1.log" 2>&1
  echo "gems-perf $3: exit status $? (log: $OUT/perf-$1.log)"
  grep -A1 "best config selected" "$OUT/perf-$1.log" | grep -v "^--" > "$OUT/autotune-$1.txt" || true
  python - "runs/blas-perf-$1/perf.csv" <<'PY'
import csv, sys
try:
    rows = list(csv.DictReader(open(sys.argv[1])))
except OSError as exc:
    sys.exit(f"no perf.csv: {exc}")
print(f"{'op':>6} {'dtype':>9} {'shape':>18} {'gems TFLOP/s':>12} {'ATen TFLOP/s':>12} {'gems/ATen':>9}  status")
for r in rows:
    tf, speed = float(r["tflops"] or "nan"), float(r["speedup"] or "nan")
    print(f'{r["op"]:>6} {r["dtype"]:>9} {r["shape"]:>18} {tf:12.1f} {tf / speed if speed else float("nan"):12.1f} '
          f'{speed:9.3f}  {r["status"]} {r["reason"][:60]}')
PY
}
# gems-perf writes perf.csv at its end: the limits leave room for tuning (compiling each fitting config).
for group in ${PERF_GROUPS:-mm bmm-mv addmm}; do
  case "$group" in
    mm) perf mm 100 mm ;;
    bmm-mv) perf bmm-mv 60 bmm,mv ;;
    addmm) perf addmm 45 addmm ;;
  esac
done
cp -r runs/blas runs/blas-perf-* "$OUT"/ 2>/dev/null || true
