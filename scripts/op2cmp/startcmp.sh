#!/bin/bash
# startcmp.sh MESHDIR NP ITERS [R]
#   Start-up / memory / run-time comparison of OP2-Common's MPI Airfoil (the reference) and GoOP2's airfoil,
#   interleaved for R rounds (default 3; odd rounds run OP2 first, even rounds GoOP2 first):
#     OP2:   mpirun -np NP --oversubscribe --bind-to none  airfoil_plain/nITERS/airfoil_par_mpi_genseq
#            (NP=1: airfoil_genseq, no mpirun) in a directory with new_grid.dat -> MESHDIR/new_grid.dat,
#            with OP_PROFILE_LEVEL=2 OP_PROFILE_JSON_OUTPUT=prof.json (per-kernel op_profile timing)
#     GoOP2: mpirun -np NP --oversubscribe --bind-to none  $GOAIRFOIL -mesh MESHDIR/new_grid.dat -iters ITERS -startup -timing
#            (-startup is dropped if the binary does not know it; NP=1: no mpirun)
#   Every rank runs under /usr/bin/time -v -o tv.RANK. Per run it prints: wall (bash clock around mpirun),
#   loop time, wall-loop (= start-up + teardown), each rank's elapsed and max RSS, and the program's own
#   timing lines. Then a summary table (medians over the rounds; min in brackets).
#   loop time:  OP2   = sum over the 5 op_par_loops of op_profile's kernel time / NP (time per rank inside
#                       op_par_loop, halo exchanges and reductions included);
#               GoOP2 = "all loops" time of -timing (rank 0).
#   region:     OP2   = op_profile "Airfoil" region, average over ranks (MPI: from before the mesh is read to the
#                       end of the loop; genseq: the loop only); GoOP2 = "backend ..., K iterations, T s".
#   output+exit (OP2 only): OP2 writes out_grid_{mpi,seq}.{dat,bin} (ASCII + binary q) after the loop; this is
#                       the time from the creation of out_grid_*.dat to the end of rank 0 (file birth times).
#   Environment: GOAIRFOIL (required) the GoOP2 airfoil binary; GOEXTRA: more arguments for it (e.g.
#                "-partition rcb"); GOEXTRA2: if set, a second GoOP2 variant with these arguments instead
#                of GOEXTRA's runs after the first in every round (reported as goop2b); OP2REF (default /work/op2ref), where OP2-Common and its dependencies were
#                built as ../shared/notes/op2-common/BUILD.md describes (OP2REF/OP2-Common, deps, tvenv,
#                op2-translator-wrap.py);
#                OP2_CACHE_DIR (default /tmp/op2ref-cache); OUT (default $OP2REF/startcmp/<mesh>-npNP-nITERS-<date>).
#   The OP2 binary for ITERS is built on first use (airfoil_plain/nITERS, niter patched, see RESULTS.md).
set -u
usage="usage: GOAIRFOIL=/path/airfoil startcmp.sh MESHDIR NP ITERS [R]"
MESH=$(readlink -f "${1:?$usage}"); NP=${2:?$usage}; N=${3:?$usage}; R=${4:-3}
GO=$(readlink -f "${GOAIRFOIL:?$usage}")
export OP2REF=${OP2REF:-/work/op2ref}
. "$(dirname "$(readlink -f "$0")")/lib.sh"
[ -x "$GO" ] || { echo "GOAIRFOIL=$GO is not executable" >&2; exit 2; }
[ -f "$MESH/new_grid.dat" ] || { echo "no $MESH/new_grid.dat" >&2; exit 2; }

APPS=$OP2REF/OP2-Common/apps/c/airfoil/airfoil_plain
D=$APPS/n$N
if [ ! -x "$D/airfoil_par_mpi_genseq" ] || [ ! -x "$D/airfoil_genseq" ]; then
  echo "building OP2 airfoil with niter=$N in $D" >&2
  rm -rf "$D" && cp -r "$APPS/dp" "$D" && sed -i "s/niter = 1000;/niter = $N;/" "$D"/airfoil.cpp "$D"/airfoil_mpi.cpp
  export OP2_COMPILER=gnu HDF5_SEQ_INSTALL_PATH=$OP2REF/deps/hdf5-serial HDF5_PAR_INSTALL_PATH=$OP2REF/deps/hdf5-openmpi
  export TRANSLATOR="$OP2REF/tvenv/bin/python3 $OP2REF/op2-translator-wrap.py -v -I /usr/lib/x86_64-linux-gnu/openmpi/include"
  (cd "$D" && make airfoil_genseq airfoil_par_mpi_genseq) > "$D/build.log" 2>&1 || { echo "build failed, see $D/build.log" >&2; exit 1; }
fi
OP2BIN=$D/airfoil_par_mpi_genseq; [ "$NP" = 1 ] && OP2BIN=$D/airfoil_genseq

SU=(-startup)
"$GO" -h 2>&1 | grep -q -E '^ +-startup\b' || { SU=(); echo "note: $GO has no -startup flag; running without it"; }
GOARGS=("${SU[@]}" ${GOEXTRA:-})

OUT=${OUT:-$OP2REF/startcmp/$(basename "$MESH")-np$NP-n$N-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"; TSV=$OUT/results.tsv; : > "$TSV"
echo "mesh=$MESH ($(head -1 "$MESH/new_grid.dat" | awk '{print $2}') cells) np=$NP iters=$N rounds=$R"
echo "OP2:   $OP2BIN"
echo "GoOP2: $GO ${GOARGS[*]:-}${GOEXTRA2:+; goop2b: $GOEXTRA2}"
echo "logs:  $OUT   cpu: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores"

op2() { run_op2 "$OUT/r$r-op2" "$NP" "$OP2BIN" "$MESH"; report "r$r op2"; }
gop() {
  run_go "$OUT/r$r-go" "$NP" "$GO" "$MESH" "$N" "${GOARGS[@]}"; report "r$r goop2"
  if [ -n "${GOEXTRA2:-}" ]; then
    run_go "$OUT/r$r-gob" "$NP" "$GO" "$MESH" "$N" "${SU[@]}" $GOEXTRA2; report "r$r goop2b"
  fi
}
for r in $(seq 1 "$R"); do
  echo "--- round $r, load $(uptime | sed 's/.*load average: //')"
  if [ $((r % 2)) = 1 ]; then op2; gop; else gop; op2; fi
done
echo "--- load at end $(uptime | sed 's/.*load average: //')"

python3 - "$TSV" <<'PY'
import sys, statistics as st
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
def num(x):
    try: return float(x)
    except ValueError: return None
print()
print("summary (median over rounds, [min]); times in s, RSS in MiB")
hdr = ("tool", "runs", "rc!=0", "wall", "loop", "wall-loop", "output+exit", "RSS max rank", "RSS all ranks")
print("%-6s %4s %5s %16s %16s %16s %12s %14s %14s" % hdr)
for tool in ("op2", "goop2", "goop2b"):
    rs = [r for r in rows if r[0].split()[-1] == tool]
    if not rs: continue
    def col(i):
        v = [num(r[i]) for r in rs if num(r[i]) is not None]
        if not v: return "-"
        if i >= 7: return "%d [%d]" % (st.median(v), min(v))
        return "%.2f [%.2f]" % (st.median(v), min(v))
    bad = sum(1 for r in rs if r[1] != "0")
    print("%-6s %4d %5d %16s %16s %16s %12s %14s %14s" % (tool, len(rs), bad, col(2), col(3), col(5), col(6), col(7), col(8)))
PY
