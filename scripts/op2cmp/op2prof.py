#!/usr/bin/env python3
"""op2prof.py PROF.json -> "REGION_AVG_S LOOP_PER_RANK_S"

Reads OP2's op_profile JSON (OP_PROFILE_LEVEL=2, OP_PROFILE_JSON_OUTPUT=...).
REGION_AVG_S: the root region ("Airfoil") time averaged over the ranks
  (airfoil_mpi.cpp: from before the mesh is read to after the last iteration;
   airfoil.cpp (genseq): the iteration loop only).
LOOP_PER_RANK_S: the kernels' (op_par_loop) total time summed over all kernels and
  ranks, divided by the number of ranks = the time per rank spent inside op_par_loops
  (halo exchanges, waits and reductions included)."""
import json, sys
d = json.load(open(sys.argv[1]))
nr = d.get("num_ranks", 1) or 1
root = d["clock"]["total"] / d["clock"]["n"] / 1e9
loops = sum(c["clock"]["total"] for c in d["children"]) / nr / 1e9
print("%.3f %.3f" % (root, loops))
