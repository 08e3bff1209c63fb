#!/usr/bin/env bash
# Builds OP2-Common's (commit b9e7a58) CUDA library (libop2_cuda.a) and the CUDA
# Airfoil (airfoil_plain/dp, double precision) from the sources in this folder,
# with plain nvcc/g++ commands (no OP2 make system, no `make config`, no MPI, no HDF5).
#
# The source set and defines mirror op2/Makefile's OP2_CUDA objects and
# makefiles/c_app.mk's airfoil_cuda rule:
#   libop2_cuda.a = core/{op_lib_core,op_rt_support,SafeLong}.o        (g++)
#                 + externlib/op_profile.o                             (g++)
#                 + cuda/{op_cuda_decl,op_cuda_rt_support}+cuda.o      (g++  -DOP2_CUDA)
#                 + cuda/op2_cuda_rt_wrappers+cuda.o                   (nvcc -DOP2_CUDA)
#   airfoil_cuda  = g++ airfoil_op.cpp + (nvcc -DOP2_CUDA cuda/op2_kernels.cu) -lop2_cuda + CUDA libs
#
# Usage: bash .op2cuda/build.sh         (from any cwd)
# Env overrides: CUDA_HOME (default /usr/local/cuda), NVCC, CXX (default g++),
#   CXXFLAGS (default "-O3 -std=c++17"), NVCCFLAGS (default "-O3 -arch=sm_90 -m64
#   --expt-relaxed-constexpr -std=c++17"), NVCC_EXTRA (appended, e.g. -allow-unsupported-compiler),
#   JOBS (default 16).
set -euo pipefail

D="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
NVCC="${NVCC:-$CUDA_HOME/bin/nvcc}"
CXX="${CXX:-g++}"
CXXFLAGS="${CXXFLAGS:--O3 -std=c++17}"
NVCCFLAGS="${NVCCFLAGS:--O3 -arch=sm_90 -m64 --expt-relaxed-constexpr -std=c++17} ${NVCC_EXTRA:-}"
B="$D/build"
LOG="$B/logs"

die() { echo "build.sh: ERROR: $*" >&2; exit 1; }

[ -x "$NVCC" ] || NVCC="$(command -v nvcc || true)"
[ -n "$NVCC" ] && [ -x "$NVCC" ] || die "nvcc not found (looked at $CUDA_HOME/bin/nvcc and PATH); set NVCC or CUDA_HOME"
command -v "$CXX" >/dev/null || die "C++ compiler '$CXX' not found"
[ -f "$CUDA_HOME/include/cuda_runtime.h" ] || die "$CUDA_HOME/include/cuda_runtime.h not found; set CUDA_HOME"
CUDA_LIBDIR="$CUDA_HOME/lib64"
[ -d "$CUDA_LIBDIR" ] || CUDA_LIBDIR="$CUDA_HOME/lib"

echo "== nvcc: $NVCC"; "$NVCC" --version | tail -n 2
echo "== g++:  $(command -v "$CXX")"; "$CXX" --version | head -n 1
echo "== CXXFLAGS:  $CXXFLAGS"
echo "== NVCCFLAGS: $NVCCFLAGS"

rm -rf "$B"
mkdir -p "$B/lib" "$B/obj" "$LOG"

OP2INC="-I$D/op2/include"
CUDAINC="-I$CUDA_HOME/include"
S="$D/op2/src"

# name|command  (one compile per line; run in parallel)
JOBS_LIST=(
  "op_lib_core|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/op_lib_core.cpp -o $B/obj/op_lib_core.o"
  "op_rt_support|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/op_rt_support.cpp -o $B/obj/op_rt_support.o"
  "SafeLong|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/SafeLong.cpp -o $B/obj/SafeLong.o"
  "op_profile|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/externlib/op_profile.cpp -o $B/obj/op_profile.o"
  "op_cuda_decl|$CXX $CXXFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op_cuda_decl.cpp -o $B/obj/op_cuda_decl+cuda.o"
  "op_cuda_rt_support|$CXX $CXXFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op_cuda_rt_support.cpp -o $B/obj/op_cuda_rt_support+cuda.o"
  "op2_cuda_rt_wrappers|$NVCC $NVCCFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op2_cuda_rt_wrappers.cu -o $B/obj/op2_cuda_rt_wrappers+cuda.o"
  "op2_kernels|$NVCC $NVCCFLAGS -I$D/app $OP2INC -DOP2_CUDA -c $D/app/cuda/op2_kernels.cu -o $B/obj/op2_kernels.o"
  "airfoil_op|$CXX $CXXFLAGS -I$D/app $OP2INC -c $D/app/airfoil_op.cpp -o $B/obj/airfoil_op.o"
)

echo "== compiling ${#JOBS_LIST[@]} files in parallel (logs in $LOG)"
t0=$(date +%s)
declare -A PIDS=()
for j in "${JOBS_LIST[@]}"; do
  name="${j%%|*}"; cmd="${j#*|}"
  echo "   $cmd"
  ( eval "$cmd" ) >"$LOG/$name.log" 2>&1 &
  PIDS[$name]=$!
done
failed=()
for name in "${!PIDS[@]}"; do
  if ! wait "${PIDS[$name]}"; then failed+=("$name"); fi
done
if [ ${#failed[@]} -gt 0 ]; then
  for name in "${failed[@]}"; do
    echo "---- FAILED: $name ($LOG/$name.log) ----" >&2
    tail -n 60 "$LOG/$name.log" >&2
  done
  die "compilation failed: ${failed[*]}"
fi
echo "== compiled in $(( $(date +%s) - t0 )) s"

echo "== archiving $B/lib/libop2_cuda.a"
ar rcs "$B/lib/libop2_cuda.a" \
  "$B/obj/op_lib_core.o" "$B/obj/op_rt_support.o" "$B/obj/SafeLong.o" \
  "$B/obj/op_cuda_decl+cuda.o" "$B/obj/op_cuda_rt_support+cuda.o" \
  "$B/obj/op2_cuda_rt_wrappers+cuda.o" "$B/obj/op_profile.o" \
  || die "ar failed"

LINK="$CXX $CXXFLAGS $B/obj/airfoil_op.o $B/obj/op2_kernels.o -L$B/lib -lop2_cuda -L$CUDA_LIBDIR -Wl,-rpath,$CUDA_LIBDIR -lcudart -o $B/airfoil_cuda"
echo "== linking: $LINK"
if ! $LINK >"$LOG/link.log" 2>&1; then
  # OP2's makefiles/dependencies/cuda.mk fallback link line
  LINK2="$CXX $CXXFLAGS $B/obj/airfoil_op.o $B/obj/op2_kernels.o -L$B/lib -lop2_cuda -L$CUDA_LIBDIR -L$CUDA_LIBDIR/stubs -Wl,-rpath,$CUDA_LIBDIR -lculibos -lcudart_static -lpthread -lrt -ldl -lcuda -lnvrtc -o $B/airfoil_cuda"
  echo "   plain -lcudart link failed:" >&2; tail -n 30 "$LOG/link.log" >&2
  echo "== retrying link: $LINK2"
  $LINK2 >"$LOG/link2.log" 2>&1 || { tail -n 40 "$LOG/link2.log" >&2; die "link failed"; }
fi

[ -x "$B/airfoil_cuda" ] || die "no binary produced"
echo "== built $B/airfoil_cuda"
ldd "$B/airfoil_cuda" | grep -Ei 'cuda|nvrtc|not found' || true
if ldd "$B/airfoil_cuda" | grep -q 'not found'; then die "unresolved shared libraries (see ldd above)"; fi
echo "== OK"
