#!/usr/bin/env bash
# Runs the OP2 CUDA Airfoil built by build.sh, RUNS times back to back (default 3),
# in a temporary folder holding a symlink new_grid.dat -> MESH (the app reads
# ./new_grid.dat from its cwd; niter = 1000 is hard-coded in airfoil.cpp).
# MG-CFD's euler3d_cuda is run by op2bench (gpu-bin/run's part op2).
#
# Usage: bash .op2cuda/run.sh MESH [extra OP2 args, e.g. OP_BLOCK_SIZE=256]
# Env:   RUNS (default 3), OP_PROFILE_LEVEL (default 2 = per-kernel timing table
#        printed by op_profile_output(); 1 = only the "Airfoil" total, 3 = detailed),
#        KEEP=1 keeps the temporary folder (out_grid_seq.dat/.bin written there).
set -euo pipefail

D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$D/build/airfoil_cuda"
die() { echo "run.sh: ERROR: $*" >&2; exit 1; }

[ $# -ge 1 ] || die "usage: $0 MESH [OP2 args]"
MESH="$(readlink -f "$1")"; shift
[ -f "$MESH" ] || die "mesh '$MESH' not found"
[ -x "$BIN" ] || die "$BIN not built; run: bash $D/build.sh"
RUNS="${RUNS:-3}"
export OP_PROFILE_LEVEL="${OP_PROFILE_LEVEL:-2}"

TMP="$(mktemp -d "${TMPDIR:-/tmp}/op2cuda_run.XXXXXX")"
if [ "${KEEP:-0}" != 1 ]; then trap 'rm -rf "$TMP"' EXIT; fi
ln -s "$MESH" "$TMP/new_grid.dat"
cd "$TMP"

echo "== binary: $BIN"
echo "== mesh:   $MESH"
echo "== cwd:    $TMP   OP_PROFILE_LEVEL=$OP_PROFILE_LEVEL   args: $*"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader || true

rc_all=0
for i in $(seq 1 "$RUNS"); do
  echo
  echo "==================== run $i of $RUNS ===================="
  t0=$(date +%s.%N)
  set +e
  "$BIN" "$@"
  rc=$?
  set -e
  t1=$(date +%s.%N)
  echo "== run $i: exit code $rc, process wall time $(awk "BEGIN{printf \"%.3f\", $t1-$t0}") s"
  [ $rc -eq 0 ] || rc_all=$rc
  [ "${KEEP:-0}" = 1 ] || rm -f out_grid_seq.dat out_grid_seq.bin
done
exit $rc_all
