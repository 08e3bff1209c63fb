# lib.sh: functions startcmp.sh uses (source it).
# Each run goes in its own directory DIR (created), with new_grid.dat symlinked for OP2,
# every rank under /usr/bin/time -v -o DIR/tv.RANK, stdout+stderr in DIR/out.txt.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OP2_CACHE_DIR=${OP2_CACHE_DIR:-/tmp/op2ref-cache}
SCRIPTS=$(dirname "${BASH_SOURCE[0]}")

# tvsec FILE: elapsed seconds from a time -v file
tvsec() { awk -F': ' '/Elapsed \(wall clock\)/{n=split($2,a,":"); s=0; for(i=1;i<=n;i++) s=s*60+a[i]; printf "%.2f", s}' "$1"; }
# tvrss FILE: max RSS in MiB
tvrss() { awk -F': ' '/Maximum resident set size/{printf "%.0f", $2/1024}' "$1"; }

# launch DIR NP CMD... : runs CMD (NP=1: directly, else under mpirun) in DIR, sets WALL RC RANKS
launch() {
  local dir=$1 np=$2; shift 2
  mkdir -p "$dir"; rm -f "$dir"/tv.* "$dir"/prof.json "$dir"/out_grid_*
  local wrap=(/bin/sh -c 'exec /usr/bin/time -v -o "tv.${OMPI_COMM_WORLD_RANK:-0}" "$@"' sh)
  local t0 t1
  t0=$(date +%s.%N)
  if [ "$np" = 1 ]; then
    (cd "$dir" && "${wrap[@]}" "$@") > "$dir/out.txt" 2>&1
  else
    (cd "$dir" && mpirun -np "$np" --oversubscribe --bind-to none \
       -x OP_PROFILE_LEVEL -x OP_PROFILE_JSON_OUTPUT -x OP2_CACHE_DIR "${wrap[@]}" "$@") > "$dir/out.txt" 2>&1
  fi
  RC=$?
  t1=$(date +%s.%N)
  WALL=$(echo "$t1 - $t0" | bc | awk '{printf "%.2f", $1}')
  echo "$WALL" > "$dir/wall.txt"
  RANKS=""; RSSMAX=0; RSSSUM=0
  local f r
  for f in $(ls "$dir"/tv.* 2>/dev/null | sort -t. -k2 -n); do
    r=$(tvrss "$f"); RANKS="$RANKS ${f##*/tv.}:$(tvsec "$f")s/${r}MiB"
    RSSSUM=$((RSSSUM + r)); [ "$r" -gt "$RSSMAX" ] && RSSMAX=$r
  done
}

# op2_outw DIR: seconds OP2 spent after the loop writing out_grid_{seq,mpi}.{dat,bin} and exiting:
# from the birth time of out_grid_*.dat to the last write of rank 0's time -v file (statx birth times).
op2_outw() {
  local f; f=$(ls "$1"/out_grid_*.dat 2>/dev/null | head -1)
  [ -n "$f" ] || { echo -; return; }
  echo "$(stat -c %.9W "$f") $(stat -c %.9Y "$1/tv.0")" | awk '{ if ($1==0) print "-"; else printf "%.2f", $2-$1 }'
}

# run_op2 DIR NP BINARY MESHDIR : OP2 airfoil (genseq if NP=1); sets LOOP REGION STARTUP
run_op2() {
  local dir=$1 np=$2 bin=$3 mesh=$4
  mkdir -p "$dir" && ln -sfn "$mesh/new_grid.dat" "$dir/new_grid.dat"
  OP_PROFILE_LEVEL=2 OP_PROFILE_JSON_OUTPUT=prof.json launch "$dir" "$np" "$bin"
  read -r REGION LOOP < <(python3 "$SCRIPTS/op2prof.py" "$dir/prof.json" 2>/dev/null || echo "- -")
  STARTUP=$(echo "$WALL $LOOP" | awk '{ if ($2=="-") print "-"; else printf "%.2f", $1-$2 }')
  OUTW=$(op2_outw "$dir")
  LOOPLINES=$(grep -E 'Airfoil \*[0-9]+ total|^ +[0-9]+  [0-9.e+-]+, max err' "$dir/out.txt" | tr -s ' ')
}

# run_go DIR NP BINARY MESHDIR ITERS [extra args]: GoOP2 airfoil; sets LOOP STARTUP
run_go() {
  OUTW=-
  local dir=$1 np=$2 bin=$3 mesh=$4 it=$5; shift 5
  launch "$dir" "$np" "$bin" -mesh "$mesh/new_grid.dat" -iters "$it" -timing "$@"
  LOOP=$(awk '/^all loops/{print $4; exit}' "$dir/out.txt"); LOOP=${LOOP:--}
  REGION=$(awk '/^backend .* iterations, .* s$/{print $(NF-1); exit}' "$dir/out.txt"); REGION=${REGION:--}
  STARTUP=$(echo "$WALL $LOOP" | awk '{ if ($2=="-") print "-"; else printf "%.2f", $1-$2 }')
  LOOPLINES=$(grep -i -E '^backend .* iterations|^all loops|start-?up|^ *[0-9]+ +[0-9.e+-]+$' "$dir/out.txt")
}

# report TAG : one line + the loop lines, and a TSV row in $TSV
report() {
  printf "%-28s rc=%d wall %7.2fs loop %7ss region %7ss wall-loop %7ss output+exit %6s rssmax %5dMiB rsssum %5dMiB ranks(elapsed/maxRSS):%s\n" \
    "$1" "$RC" "$WALL" "$LOOP" "$REGION" "$STARTUP" "$( [ "${OUTW:--}" = - ] && echo - || echo "${OUTW}s")" "$RSSMAX" "$RSSSUM" "$RANKS"
  [ -n "$LOOPLINES" ] && echo "$LOOPLINES" | sed 's/^/    | /'
  [ -n "${TSV:-}" ] && printf "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n" "$1" "$RC" "$WALL" "$LOOP" "$REGION" "$STARTUP" "${OUTW:--}" "$RSSMAX" "$RSSSUM" "$RANKS" >> "$TSV"
  return 0
}
