#!/usr/bin/env bash
# Builds OP2-Common's (commit b9e7a58) CUDA library (libop2_cuda.a), its
# HDF5 library (libop2_hdf5.a), the CUDA Airfoil (airfoil_plain/dp, double
# precision) and MG-CFD's CUDA build (euler3d_cuda) from the kit that
# scripts/op2cuda/make-kit writes to .op2cuda/, with plain nvcc/g++ commands
# (no OP2 make system, no `make config`, no MPI; HDF5 from the kit, static).
#
# The source sets and defines mirror op2/Makefile's OP2_CUDA and OP2_HDF5
# objects and makefiles/c_app.mk's APP_cuda rule:
#   libop2_cuda.a = core/{op_lib_core,op_rt_support,SafeLong}.o        (g++)
#                 + externlib/op_profile.o                             (g++)
#                 + cuda/{op_cuda_decl,op_cuda_rt_support}+cuda.o      (g++  -DOP2_CUDA)
#                 + cuda/op2_cuda_rt_wrappers+cuda.o                   (nvcc -DOP2_CUDA)
#   libop2_hdf5.a = externlib/{op_util,op_hdf5}.o                      (g++, HDF5 headers)
#   airfoil_cuda  = g++ airfoil/airfoil_op.cpp + (nvcc -DOP2_CUDA airfoil/cuda/op2_kernels.cu)
#                   -lop2_cuda + CUDA libs
#   euler3d_cuda  = g++ mgcfd/euler3d_op.cpp + (nvcc -DOP2_CUDA mgcfd/cuda/op2_kernels.cu)
#                   -lop2_cuda -lop2_hdf5 + HDF5 (libhdf5.a libsz.a libaec.a libz.a) + CUDA libs
# (c_app.mk links MG-CFD with OP2_LIBS_WITH_HDF5 = true, hence -lop2_hdf5.)
#
# Usage: bash .op2cuda/build.sh [airfoil] [mgcfd]   (from any cwd; both when none is named)
#   -> .op2cuda/build/{airfoil_cuda,euler3d_cuda}, build/lib/, build/logs/
# Env overrides: CUDA_HOME (default /usr/local/cuda), NVCC, CXX (default g++),
#   CXXFLAGS (default "-O3 -std=c++17"), NVCCFLAGS (default "-O3 -arch=sm_90 -m64
#   --expt-relaxed-constexpr -std=c++17"), NVCC_EXTRA (appended, e.g. -allow-unsupported-compiler).
# Every file compiles at once (13 with both apps).
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

apps=("$@")
[ ${#apps[@]} -gt 0 ] || apps=(airfoil mgcfd)
want_airfoil=0 want_mgcfd=0
for a in "${apps[@]}"; do
  case $a in
  airfoil) want_airfoil=1 ;;
  mgcfd) want_mgcfd=1 ;;
  *) die "unknown app '$a' (airfoil or mgcfd)" ;;
  esac
done

[ -x "$NVCC" ] || NVCC="$(command -v nvcc || true)"
[ -n "$NVCC" ] && [ -x "$NVCC" ] || die "nvcc not found (looked at $CUDA_HOME/bin/nvcc and PATH); set NVCC or CUDA_HOME"
command -v "$CXX" >/dev/null || die "C++ compiler '$CXX' not found"
[ -f "$CUDA_HOME/include/cuda_runtime.h" ] || die "$CUDA_HOME/include/cuda_runtime.h not found; set CUDA_HOME"
CUDA_LIBDIR="$CUDA_HOME/lib64"
[ -d "$CUDA_LIBDIR" ] || CUDA_LIBDIR="$CUDA_HOME/lib"
[ -d "$D/op2/src" ] || die "$D holds no OP2 sources: make the kit with scripts/op2cuda/make-kit OP2REF"

echo "== nvcc: $NVCC"; "$NVCC" --version | tail -n 2
echo "== g++:  $(command -v "$CXX")"; "$CXX" --version | head -n 1
echo "== CXXFLAGS:  $CXXFLAGS"
echo "== NVCCFLAGS: $NVCCFLAGS"
[ -f "$D/VERSIONS" ] && sed 's/^/== /' "$D/VERSIONS"

rm -rf "$B"
mkdir -p "$B/lib" "$B/obj" "$LOG"

OP2INC="-I$D/op2/include"
CUDAINC="-I$CUDA_HOME/include"
S="$D/op2/src"
H5="$B/hdf5"

# name|command  (one compile per line; run in parallel)
JOBS_LIST=(
  "op_lib_core|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/op_lib_core.cpp -o $B/obj/op_lib_core.o"
  "op_rt_support|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/op_rt_support.cpp -o $B/obj/op_rt_support.o"
  "SafeLong|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/core/SafeLong.cpp -o $B/obj/SafeLong.o"
  "op_profile|$CXX $CXXFLAGS $OP2INC $CUDAINC -c $S/externlib/op_profile.cpp -o $B/obj/op_profile.o"
  "op_cuda_decl|$CXX $CXXFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op_cuda_decl.cpp -o $B/obj/op_cuda_decl+cuda.o"
  "op_cuda_rt_support|$CXX $CXXFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op_cuda_rt_support.cpp -o $B/obj/op_cuda_rt_support+cuda.o"
  "op2_cuda_rt_wrappers|$NVCC $NVCCFLAGS $OP2INC $CUDAINC -DOP2_CUDA -c $S/cuda/op2_cuda_rt_wrappers.cu -o $B/obj/op2_cuda_rt_wrappers+cuda.o"
)
if [ $want_airfoil = 1 ]; then
  JOBS_LIST+=(
    "airfoil_kernels|$NVCC $NVCCFLAGS -I$D/airfoil $OP2INC -DOP2_CUDA -c $D/airfoil/cuda/op2_kernels.cu -o $B/obj/airfoil_kernels.o"
    "airfoil_op|$CXX $CXXFLAGS -I$D/airfoil $OP2INC -c $D/airfoil/airfoil_op.cpp -o $B/obj/airfoil_op.o"
  )
fi
if [ $want_mgcfd = 1 ]; then
  mkdir -p "$H5"
  tar -C "$H5" -xzf "$D/hdf5.tar.gz" || die "cannot unpack $D/hdf5.tar.gz"
  JOBS_LIST+=(
    "op_util|$CXX $CXXFLAGS $OP2INC -I$H5/include -c $S/externlib/op_util.cpp -o $B/obj/op_util.o"
    "op_hdf5|$CXX $CXXFLAGS $OP2INC -I$H5/include -c $S/externlib/op_hdf5.cpp -o $B/obj/op_hdf5.o"
    "euler3d_kernels|$NVCC $NVCCFLAGS -I$D/mgcfd $OP2INC -DOP2_CUDA -c $D/mgcfd/cuda/op2_kernels.cu -o $B/obj/euler3d_kernels.o"
    "euler3d_op|$CXX $CXXFLAGS -I$D/mgcfd $OP2INC -I$H5/include -c $D/mgcfd/euler3d_op.cpp -o $B/obj/euler3d_op.o"
  )
fi

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
if [ $want_mgcfd = 1 ]; then
  echo "== archiving $B/lib/libop2_hdf5.a"
  ar rcs "$B/lib/libop2_hdf5.a" "$B/obj/op_util.o" "$B/obj/op_hdf5.o" || die "ar failed"
fi

# link NAME OBJECTS... -- LIBS...: links build/NAME with -lcudart, else with
# OP2's makefiles/dependencies/cuda.mk fallback line.
link() {
  local name=$1 objs=() libs=()
  shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do objs+=("$1"); shift; done
  shift
  libs=("$@")
  local l1="$CXX $CXXFLAGS ${objs[*]} -L$B/lib ${libs[*]} -L$CUDA_LIBDIR -Wl,-rpath,$CUDA_LIBDIR -lcudart -o $B/$name"
  echo "== linking: $l1"
  if ! $l1 >"$LOG/link-$name.log" 2>&1; then
    local l2="$CXX $CXXFLAGS ${objs[*]} -L$B/lib ${libs[*]} -L$CUDA_LIBDIR -L$CUDA_LIBDIR/stubs -Wl,-rpath,$CUDA_LIBDIR -lculibos -lcudart_static -lpthread -lrt -ldl -lcuda -lnvrtc -o $B/$name"
    echo "   plain -lcudart link failed:" >&2; tail -n 30 "$LOG/link-$name.log" >&2
    echo "== retrying link: $l2"
    $l2 >"$LOG/link2-$name.log" 2>&1 || { tail -n 40 "$LOG/link2-$name.log" >&2; die "link of $name failed"; }
  fi
  [ -x "$B/$name" ] || die "no binary $name produced"
  echo "== built $B/$name"
  ldd "$B/$name" | grep -Ei 'cuda|nvrtc|hdf5|not found' || true
  if ldd "$B/$name" | grep -q 'not found'; then die "$name: unresolved shared libraries (see ldd above)"; fi
}

if [ $want_airfoil = 1 ]; then
  link airfoil_cuda "$B/obj/airfoil_op.o" "$B/obj/airfoil_kernels.o" -- -lop2_cuda
fi
if [ $want_mgcfd = 1 ]; then
  # The OP2 libraries in a group: op_hdf5 calls back into libop2_cuda.
  link euler3d_cuda "$B/obj/euler3d_op.o" "$B/obj/euler3d_kernels.o" -- \
    -Wl,--start-group -lop2_cuda -lop2_hdf5 -Wl,--end-group \
    "$H5/lib/libhdf5.a" "$H5/lib/libsz.a" "$H5/lib/libaec.a" "$H5/lib/libz.a" -ldl -lm -lpthread
fi
echo "== OK"
