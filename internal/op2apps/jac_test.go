package op2apps

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// jacOutputs are the OP2 outputs each jac variant is compared with: jac1/longint
// is jac_mpi.cpp with NN 6 (its 2¹⁵ makes 10⁹ nodes) on one rank.
var jacOutputs = map[JacVariant]string{
	Jac1DP:      "jac1_dp.txt",
	Jac1SP:      "jac1_sp.txt",
	Jac1Longint: "longint_np1.txt",
	Jac2:        "jac2.txt",
}

// jacNN is OP2's NN in jac.cpp.
const jacNN = 6

// checkResult is OP2's check_result (check_result.h): the exact value of
// u at node (i,j) after JacIters iterations, for the tolerance-free
// comparison the values allow (they are sums of a few quarters, exact in
// float and double).
func checkResult(nn, i, j int) float64 {
	corner := func(a, b int) bool { return (a == 1 || a == nn-1) && (b == 1 || b == nn-1) }
	switch {
	case corner(i, j):
		return 0.625
	case (i == 1 || i == nn-1) && (j == 2 || j == nn-2), (j == 1 || j == nn-1) && (i == 2 || i == nn-2):
		return 0.4375
	case (i == 2 || i == nn-2) && (j == 2 || j == nn-2):
		return 0.125
	case i == 1 || j == 1 || i == nn-1 || j == nn-1:
		return 0.375
	case i == 2 || j == 2 || i == nn-2 || j == nn-2:
		return 0.0625
	}
	return 0
}

// compareJac compares r with what OP2's build of v printed (file, in
// testdata/op2): the "u max/rms = %f %f" lines, the " %7.4f" grid of u where
// it prints one, jac1/dp's "edge %d, nodes %d, %d" lines, and u with
// check_result's values exactly. Under MPI only rank 0 has U and Index.
func compareJac(t *testing.T, v JacVariant, nn int, r *JacResult, file string, rank0 bool) {
	t.Helper()
	maxRMS := op2Lines(t, file, `^ u max/rms = (\S+) (\S+) $`)
	if len(maxRMS) != JacIters || len(r.UMax) != JacIters {
		t.Fatalf("%d max/rms lines from OP2, %d from GoOP2", len(maxRMS), len(r.UMax))
	}
	for i, m := range maxRMS {
		if got := fmt.Sprintf("%f", r.UMax[i]); got != m[0] {
			t.Errorf("iteration %d: u max %s, OP2 %s", i+1, got, m[0])
		}
		if got := fmt.Sprintf("%f", r.URMS[i]); got != m[1] {
			t.Errorf("iteration %d: u rms %s, OP2 %s", i+1, got, m[1])
		}
	}
	if !rank0 {
		return
	}
	if len(r.U) != (nn-1)*(nn-1) {
		t.Fatalf("%d values of u, want %d", len(r.U), (nn-1)*(nn-1))
	}
	for i := 1; i < nn; i++ {
		for j := 1; j < nn; j++ {
			if got, want := r.U[i-1+(j-1)*(nn-1)], checkResult(nn, i, j); got != want {
				t.Errorf("u at i=%d, j=%d is %.17g, check_result expects %g", i, j, got, want)
			}
		}
	}
	if v != Jac1Longint {
		// OP2's grid: rows j = NN-1 down to 1, each " %7.4f" for i = 1..NN-1.
		grid := op2Lines(t, file, `^((?: +-?\d+\.\d{4})+)$`)
		if len(grid) != nn-1 {
			t.Fatalf("%d grid lines in %s", len(grid), file)
		}
		for row, j := 0, nn-1; j > 0; row, j = row+1, j-1 {
			var b strings.Builder
			for i := 1; i < nn; i++ {
				fmt.Fprintf(&b, " %7.4f", r.U[i-1+(j-1)*(nn-1)])
			}
			if b.String() != grid[row][0] {
				t.Errorf("grid row j=%d:\n%s GoOP2\n%s OP2", j, b.String(), grid[row][0])
			}
		}
	}
	if v == Jac1DP {
		edges := op2Lines(t, file, `^edge (\d+), nodes (\d+), (\d+)$`)
		// res prints every edge in each of the iterations; Index is the last.
		last := edges[len(edges)-len(r.Index):]
		if len(edges) != JacIters*len(r.Index) {
			t.Fatalf("OP2 printed %d edge lines; GoOP2 has %d edges, %d iterations", len(edges), len(r.Index), JacIters)
		}
		for e, m := range last {
			want := [3]int32{int32(atoi(t, m[0])), int32(atoi(t, m[1])), int32(atoi(t, m[2]))}
			if r.Index[e] != want {
				t.Errorf("edge %d: index arguments %v, OP2 printed %v", e, r.Index[e], want)
			}
		}
	}
}

// TestJac runs each jac port on every configuration and compares it with
// OP2's output.
func TestJac(t *testing.T) {
	forEachConfig(t, func(t *testing.T, c runConfig) {
		for _, v := range JacVariants {
			r, err := RunJac(v, jacNN, nil)
			if err != nil {
				t.Fatalf("%s: %v", v, err)
			}
			t.Run(strings.ReplaceAll(string(v), "/", "-"), func(t *testing.T) {
				compareJac(t, v, jacNN, r, jacOutputs[v], true)
			})
		}
	})
}

// TestJac1DPPrintf runs jac1/dp with OP2's res.h as it ships, printing
// its index arguments from the kernel, in a child process whose standard
// output it reads: on sequential the lines are OP2's, in OP2's order; on
// openmp (2 threads; blocks of a colour run in any order) and opencl (the
// device's printf) the same lines in some order. On 2 MPI ranks each rank prints its edges by their
// global numbers, and the edges of its exec halo too, which both ranks
// compute (owner-compute, as in OP2): OP2's lines, each at least once per
// iteration. (OP2's own MPI build prints local numbers there: its
// jac1/longint with the printf on 2 ranks printed 234 lines, 107 of them
// distinct; docs/history/op2apps-2026-11-27.txt.)
func TestJac1DPPrintf(t *testing.T) {
	if b := os.Getenv("OP2APPS_PRINTF_BACKEND"); b != "" {
		configure(t, runConfig{backend: b, lazy: true})
		r, err := RunJac(Jac1DPPrintf, jacNN, RandomOwner(5))
		if err != nil {
			t.Fatal(err)
		}
		compareJac(t, Jac1DP, jacNN, r, jacOutputs[Jac1DP], op2.Rank() == 0)
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if mpitest.InRanks() {
		return
	}
	want := op2Lines(t, jacOutputs[Jac1DP], `^(edge \d+, nodes \d+, \d+)$`)
	// check compares the edge lines of out with OP2's: in its order, in
	// any order, or (repeats) as sets, each line at least as often.
	check := func(t *testing.T, out []byte, ordered, repeats bool) {
		t.Helper()
		var got []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "edge ") {
				got = append(got, l)
			}
		}
		var w []string
		for _, m := range want {
			w = append(w, m[0])
		}
		if !ordered {
			slices.Sort(got)
			slices.Sort(w)
		}
		if repeats {
			count := map[string]int{}
			for _, l := range got {
				count[l]++
			}
			for _, l := range w {
				count[l]--
			}
			for l, n := range count {
				if n < 0 || n%JacIters != 0 {
					t.Errorf("%q printed %d times more than by OP2 on one process", l, n)
				}
			}
			return
		}
		if !slices.Equal(got, w) {
			t.Errorf("the kernel printed %d edge lines, OP2 %d, or other ones:\n%s", len(got), len(w), out)
		}
	}
	for _, tc := range []struct {
		backend string
		ordered bool
	}{{"sequential", true}, {"openmp", false}, {"opencl", false}} {
		t.Run(tc.backend, func(t *testing.T) {
			configure(t, runConfig{backend: tc.backend}) // skips without opencl
			configure(t, runConfig{backend: "sequential"})
			cmd := exec.Command(os.Args[0], "-test.run=^TestJac1DPPrintf$", "-test.count=1")
			cmd.Env = append(os.Environ(), "OP2APPS_PRINTF_BACKEND="+tc.backend)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v:\n%s", err, out)
			}
			check(t, out, tc.ordered, false)
		})
	}
	t.Run("2 ranks", func(t *testing.T) {
		out, err := mpitest.Output(t, 2, time.Minute, "OP2APPS_PRINTF_BACKEND=sequential")
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		check(t, out, false, true)
	})
}
