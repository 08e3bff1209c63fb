package op2_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/sigstack"
)

// TestMPIErrors runs jobs that go wrong on purpose and checks that every
// rank reports what is wrong (naming the rank and what to install or fix)
// and that a failing rank stops the whole job instead of hanging it.
func TestMPIErrors(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		// ranks runs on every rank and returns the error the case is about.
		ranks func(t *testing.T) error
		want  []string // in that error
		// fails: the job must fail (a rank aborts) and its output hold want.
		fails bool
	}{
		{
			name: "mismatched-declarations",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				if op2.Rank() == 1 {
					must(op2.NewSet(3, "extra"))
				}
				_, err := op2.Partition(op2.BlockPartitioner())
				return err
			},
			want: []string{"rank 1 declared a different mesh", "extra"},
		},
		{
			name: "metis-missing",
			env:  []string{"OP2_METIS_LIBRARY=/nonexistent/libmetis.so.5"},
			ranks: func(t *testing.T) error {
				_, m := declareRing(t, 8)
				_, err := op2.Partition(op2.METISPartitioner(m))
				return err
			},
			want: []string{"METISPartitioner", "apt-get install libmetis5"},
		},
		{
			// PETSc missing on rank 1 only: every rank says so at once
			// (rank 0 waited in PetscInitialize for OP2_MPI_TIMEOUT) and
			// matches ErrPETScUnavailable.
			name: "petsc-missing-on-one-rank",
			ranks: func(t *testing.T) error {
				if op2.Rank() == 1 {
					t.Setenv("OP2_PETSC_LIBRARY", "/nonexistent/libpetsc.so")
				}
				_, err := op2.NewSolver(op2.SolverOptions{Package: "petsc"})
				if err != nil && !errors.Is(err, op2.ErrPETScUnavailable) {
					return fmt.Errorf("does not match ErrPETScUnavailable: %w", err)
				}
				return err
			},
			want: []string{"rank 1: ", "/nonexistent/libpetsc.so", "apt-get install"},
		},
		{
			name: "loop-before-partition",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
				return op2.ParLoop(op2.NewKernel("void one(double *d) { *d = 1; }", "one"), nodes, d.Arg(op2.Write))
			},
			want: []string{"loop one over set \"nodes\"", "call op2.Partition before the first loop"},
		},
		{
			name: "subset-distributed",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				_, err := op2.NewSubset(nodes, []int32{1, 2})
				return err
			},
			want: []string{`subset of set "nodes": in a distributed run subsets are declared after op2.Partition`},
		},
		{
			// Not "outside the target set [0,2147483647)": the rank's
			// block has its own numbers and no set size to name.
			name: "negative-map-entry-before-partition",
			ranks: func(t *testing.T) error {
				nodes := must(op2.NewSet(4, "nodes"))
				edges := must(op2.NewSet(2, "edges"))
				_, err := op2.NewMap(edges, nodes, 2, []int32{0, 1, 2, -3}, "pedge")
				return err
			},
			want: []string{`map "pedge" from "edges" to "nodes": entry 3 of this rank's block (its element 1, column 1) is -3: entries are global numbers of the target set's elements, from 0`},
		},
		{
			name: "subset-bad-index-on-one-rank",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				idx := []int32{0}
				if op2.Rank() == 1 {
					idx = []int32{0, 100}
				}
				_, err := op2.NewSubset(nodes, idx)
				return err
			},
			want: []string{`op2: rank 1: subset of set "nodes": index 100 (position 1) is outside the set's elements [0,`},
		},
		{
			name: "renumber-distributed",
			ranks: func(t *testing.T) error {
				_, m := declareRing(t, 8)
				_, err := op2.Renumber(op2.RCMOrdering(m))
				return err
			},
			want: []string{"op2: Renumber: renumbering is not supported in distributed runs (2 MPI ranks)"},
		},
		{
			name: "declared-after-partition",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				_, err := op2.NewSet(4, "late")
				return err
			},
			want: []string{"declared after Partition"},
		},
		{
			name: "composed-map-refused-on-one-rank",
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				inner := nodeEdges(nodes, m, 0)
				if op2.Rank() == 1 {
					inner = nil
				}
				_, err := op2.NewComposedMap("ring2", m, inner)
				return err
			},
			want: []string{`op2: rank 1: composed map "ring2": map 1 of 2 is nil`},
		},
		{
			name: "composed-map-entry-outside",
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				// Global numbers are checked by Partition; composing looks
				// them up first.
				_, err := op2.NewComposedMap("ring far", m, nodeEdges(nodes, m, 1000))
				return err
			},
			want: []string{`op2: rank 1: composed map "ring far": map "ring" at the entries through map "n2e" (elements of set "edges"): entry 3 is 1000, outside the set [0,16)`},
		},
		{
			name: "composed-map-after-partition",
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				n2e := nodeEdges(nodes, m, 0)
				must(op2.Partition(op2.BlockPartitioner()))
				_, err := op2.NewComposedMap("late", m, n2e)
				return err
			},
			want: []string{`op2: composed map "late" declared after Partition: compose maps before op2.Partition`},
		},
		{
			name: "mpicc-missing",
			env:  []string{"MPICC=/nonexistent/mpicc"},
			ranks: func(t *testing.T) error {
				_, err := op2.NewSet(4, "nodes")
				return err
			},
			want: []string{"/nonexistent/mpicc", "apt-get install openmpi-bin libopenmpi-dev", "MPICC"},
		},
		{
			name: "rcb-nil-coordinates",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				_, err := op2.Partition(op2.RCBPartitioner(nil))
				return err
			},
			want: []string{"RCBPartitioner: no coordinates (a nil Dat)"},
		},
		{
			name: "metis-nil-map",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				_, err := op2.Partition(op2.METISPartitioner(nil))
				return err
			},
			want: []string{"METISPartitioner: no map (a nil Map)"},
		},
		{
			name: "owner-not-a-rank",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				owner := make([]int32, nodes.Size())
				owner[3] = 5
				_, err := op2.Partition(op2.OwnerPartitioner(must(op2.NewDat(nodes, 1, owner, "owner"))))
				return err
			},
			want: []string{`OwnerPartitioner on dat "owner"`, `element 3 of set "nodes" has owner 5, not a rank (0 to 1)`},
		},
		{
			name: "ranks-at-different-loops",
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
				s := must(op2.NewDat[float64](m.From(), 1, nil, "s"))
				if op2.Rank() == 0 {
					return op2.ParLoop(op2.NewKernel("void one(const double *d) { }", "one"), m.From(), d.ArgMap(op2.Read, m, 0))
				}
				return op2.ParLoop(op2.NewKernel("void two(const double *d, double *s) { *s = *d; }", "two"), m.From(), d.ArgMap(op2.Read, m, 1), s.Arg(op2.Write))
			},
			want: []string{"the ranks are at different loops", `rank 0: loop "one" over set "edges" with 1 arguments`, `rank 1: loop "two" over set "edges" with 2 arguments`},
		},
		{
			name: "optional-argument-differs",
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				d := must(op2.NewDat(nodes, 1, make([]float64, nodes.Size()), "d"))
				s := must(op2.NewDat[float64](m.From(), 1, nil, "s"))
				k := op2.NewKernel("void sum(const double *a, double *s) { if (a) *s = *a; }", "sum")
				return op2.ParLoop(k, m.From(), op2.Opt(op2.Rank() == 0, d.ArgMap(op2.Read, m, 1)), s.Arg(op2.Write))
			},
			want: []string{`loop "sum" over set "edges"`, "optional argument 0 (op2.Opt) is enabled on some ranks and disabled on others"},
		},
		{
			// A loop's agreement meeting a collective operation of
			// another kind (Mat.Dense's first step): each rank names
			// where every rank is.
			name: "loop-meets-mat-gather",
			ranks: func(t *testing.T) error {
				nodes, ring := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				A := must(op2.NewMat[float64](must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ring, Col: ring}}, "sp")), "A"))
				d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
				s := must(op2.NewDat[float64](ring.From(), 1, nil, "s"))
				if op2.Rank() == 0 {
					_, err := A.Dense()
					return err
				}
				return op2.ParLoop(op2.NewKernel("void two(const double *d, double *s) { *s = *d; }", "two"), ring.From(), d.ArgMap(op2.Read, ring, 1), s.Arg(op2.Write))
			},
			want: []string{"the ranks are at different collective operations", `rank 0: Mat.Gather of mat "A"`, `rank 1: loop "two" over set "edges" with 2 arguments`},
		},
		{
			name: "gathers-of-different-dats",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				a := must(op2.NewDat[float64](nodes, 1, nil, "a"))
				b := must(op2.NewDat[int32](nodes, 2, nil, "b"))
				var err error
				if op2.Rank() == 0 {
					_, err = a.Gather()
				} else {
					_, err = b.Gather()
				}
				return err
			},
			want: []string{"the ranks are at different collective operations", `rank 0: Gather of dat "a" on set "nodes"`, `rank 1: Gather of dat "b" on set "nodes"`},
		},
		{
			// Mat.Gather is collective too: a matrix's gather meeting a
			// Dat's or another matrix's is named, not read as rows.
			name: "mat-gather-meets-dat-gather",
			ranks: func(t *testing.T) error {
				nodes, ring := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				A := must(op2.NewMat[float64](must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ring, Col: ring}}, "sp")), "A"))
				if op2.Rank() == 0 {
					_, err := A.Dense()
					return err
				}
				_, err := must(op2.NewDat[float64](nodes, 1, nil, "x")).Gather()
				return err
			},
			want: []string{"the ranks are at different collective operations", `rank 0: Mat.Gather of mat "A"`, `rank 1: Gather of dat "x" on set "nodes"`},
		},
		{
			name: "gathers-of-different-mats",
			ranks: func(t *testing.T) error {
				nodes, ring := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: ring, Col: ring}}, "sp"))
				A, B := must(op2.NewMat[float64](sp, "A")), must(op2.NewMat[float64](sp, "B"))
				var err error
				if op2.Rank() == 0 {
					_, _, _, err = A.Gather()
				} else {
					_, _, _, err = B.Gather()
				}
				return err
			},
			want: []string{"the ranks are at different collective operations", `rank 0: Mat.Gather of mat "A"`, `rank 1: Mat.Gather of mat "B"`},
		},
		{
			// Loops with Global reductions need no agreement before
			// them: their results travel with the loop's identity.
			name: "different-reduction-loops",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				x := must(op2.NewDat(nodes, 1, make([]float64, nodes.Size()), "x"))
				g := must(op2.NewGlobal(1, []float64{0}, "g"))
				if op2.Rank() == 0 {
					return op2.ParLoop(op2.NewKernel("void psum(const double *x, double *g) { *g += *x; }", "psum"), nodes, x.Arg(op2.Read), g.Arg(op2.Inc))
				}
				return op2.ParLoop(op2.NewKernel("void pmax(const double *x, double *g) { if (*x > *g) *g = *x; }", "pmax"), nodes, x.Arg(op2.Read), g.Arg(op2.Max))
			},
			want: []string{"the ranks are at different loops", `rank 0: loop "psum"`, `rank 1: loop "pmax"`},
		},
		{
			// Results of different sizes too: the first message has one
			// size whatever the Global's.
			name: "different-reduction-sizes",
			ranks: func(t *testing.T) error {
				nodes, _ := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				x := must(op2.NewDat(nodes, 1, make([]float64, nodes.Size()), "x"))
				if op2.Rank() == 0 {
					g := must(op2.NewGlobal(1, []float64{0}, "g"))
					return op2.ParLoop(op2.NewKernel("void ps1(const double *x, double *g) { *g += *x; }", "ps1"), nodes, x.Arg(op2.Read), g.Arg(op2.Inc))
				}
				g := must(op2.NewGlobal(40, make([]float64, 40), "g40"))
				return op2.ParLoop(op2.NewKernel("void ps40(const double *x, double *g) { g[39] += *x; }", "ps40"), nodes, x.Arg(op2.Read), g.Arg(op2.Inc))
			},
			want: []string{"the ranks are at different loops", `rank 0: loop "ps1"`, `rank 1: loop "ps40"`},
		},
		{
			// Loops that read only halos every rank knows are out of date
			// need no agreement either: their messages' tags differ, so
			// the ranks wait out the timeout, naming their loop, rather
			// than take one loop's Dat into the other's halo.
			name: "different-loops-stale-halos",
			env:  []string{"OP2_MPI_TIMEOUT=2s"},
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
				s := must(op2.NewDat[float64](m.From(), 1, nil, "s"))
				check(t, op2.ParLoop(op2.NewKernel("void set1(double *d) { *d = 1; }", "set1"), nodes, d.Arg(op2.Write)))
				name := []string{"one", "two"}[op2.Rank()]
				k := op2.NewKernel("void "+name+"(const double *d, double *s) { *s = *d; }", name)
				return op2.ParLoop(k, m.From(), d.ArgMap(op2.Read, m, 1), s.Arg(op2.Write))
			},
			want:  []string{`over set "edges": halo exchange waiting for dat "d"`, "OP2_MPI_TIMEOUT"}, // either rank may time out first
			fails: true,
		},
		{
			// A collective call's arguments refused on one rank: the
			// others say so at once rather than wait in the call.
			name: "solve-bad-argument-on-one-rank",
			ranks: func(t *testing.T) error {
				nodes, _, ident, _ := rankChain(t, 10, nil)
				A, x, b := diagSystem(nodes, ident)
				check(t, op2.ParLoop(op2.NewKernel(`void sb_d(double *A) { A[0] = 1; }`, "sb_d"), nodes, A.Arg(op2.Inc, ident, ident)))
				if op2.Rank() == 1 {
					b = x
				}
				_, err := must(op2.NewSolver(op2.SolverOptions{})).Solve(A, x, b)
				return err
			},
			want: []string{"x and b are the same"},
		},
		{
			name: "checkpoint-bad-path-on-one-rank",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				path := filepath.Join(os.TempDir(), fmt.Sprintf("goop2-ckpt-%d.h5", os.Getppid()))
				if op2.Rank() == 1 {
					path = ""
				}
				err := op2.Checkpoint(path, nil)
				if err == nil {
					os.Remove(path)
				}
				return err
			},
			want: []string{"Checkpoint: the path is empty"},
		},
		{
			name: "partitioners-differ",
			ranks: func(t *testing.T) error {
				_, m := declareRing(t, 8)
				p := op2.BlockPartitioner()
				if op2.Rank() == 1 {
					p = op2.AutoPartitioner(m, nil)
				}
				_, err := op2.Partition(p)
				return err
			},
			want: []string{"the ranks are at different collective operations", `rank 0: Partition with partitioner "block"`, `rank 1: Partition with partitioner "auto"`},
		},
		{
			name: "halo-exchange-times-out",
			env:  []string{"OP2_MPI_TIMEOUT=2s"},
			ranks: func(t *testing.T) error {
				nodes, m := declareRing(t, 8)
				must(op2.Partition(op2.BlockPartitioner()))
				q := must(op2.NewDat(nodes, 1, make([]float64, nodes.Size()), "q"))
				s := must(op2.NewDat[float64](m.From(), 1, nil, "s"))
				k := op2.NewKernel("void avg(const double *a, const double *b, double *s) { *s = *a + *b; }", "avg")
				if op2.Rank() == 1 {
					op2.DropHaloSends(true) // as if rank 1 had stopped sending
				}
				for {
					if err := op2.ParLoop(k, m.From(), q.ArgMap(op2.Read, m, 0), q.ArgMap(op2.Read, m, 1), s.Arg(op2.Write)); err != nil {
						return err
					}
					q.Data() // the halo must be exchanged again
				}
			},
			want: []string{`op2: rank 0: loop "avg" over set "edges": halo exchange waiting for dat "q" from rank 1 (receive of`,
				"rank 0 waited 2s in MPI_Waitall"},
			fails: true,
		},
		{
			name: "rank-aborts",
			ranks: func(t *testing.T) error {
				declareRing(t, 8)
				if op2.Rank() == 1 {
					op2.Abort(errors.New("rank 1 stops on purpose"))
				}
				_, err := op2.Partition(op2.BlockPartitioner()) // waits for rank 1
				return err
			},
			want:  []string{"op2: rank 1: rank 1 stops on purpose"},
			fails: true,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if mpitest.InRanks() {
				err := c.ranks(t)
				if err == nil {
					t.Fatalf("rank %d: no error", op2.Rank())
				}
				for _, w := range c.want {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("rank %d: error %q does not mention %q", op2.Rank(), err, w)
					}
				}
				check(t, op2.Finalize())
				return
			}
			out, err := mpitest.Output(t, 2, 2*time.Minute, c.env...)
			switch {
			case c.fails && err == nil:
				t.Fatalf("the job succeeded:\n%s", out)
			case !c.fails && err != nil:
				t.Fatalf("%v:\n%s", err, out)
			}
			for _, w := range c.want {
				if c.fails && !strings.Contains(string(out), w) {
					t.Errorf("the job's output does not mention %q:\n%s", w, out)
				}
			}
		})
	}
}

// declareRing declares a ring of n nodes per rank joined by edges, in the
// global numbering, and returns the nodes and the edge map.
func declareRing(t *testing.T, n int) (*op2.Set, *op2.Map) {
	r, ranks := op2.Rank(), op2.Ranks()
	nodes := must(op2.NewSet(n, "nodes"))
	edges := must(op2.NewSet(n, "edges"))
	total := n * ranks
	m := make([]int32, 0, 2*n)
	for i := r * n; i < (r+1)*n; i++ {
		m = append(m, int32(i), int32((i+1)%total))
	}
	return nodes, must(op2.NewMap(edges, nodes, 2, m, "ring"))
}

// nodeEdges declares, after declareRing, the map from each node to the
// edge of its number, in the global numbering; on rank 1 the entry of its
// node 3 is bad instead, when bad is not 0.
func nodeEdges(nodes *op2.Set, ring *op2.Map, bad int32) *op2.Map {
	tab := make([]int32, nodes.Size())
	for i := range tab {
		tab[i] = int32(op2.Rank()*nodes.Size() + i)
	}
	if bad != 0 && op2.Rank() == 1 {
		tab[3] = bad
	}
	return must(op2.NewMap(nodes, ring.From(), 1, tab, "n2e"))
}

// TestSignalHandlersSurviveMPIAndOpenCL: after MPI starts (Open MPI's
// hwloc may start OpenCL drivers) and the opencl backend starts PoCL
// (which installs a SIGFPE handler without SA_ONSTACK), every signal
// handler still runs on the alternate signal stack, as the Go run time
// needs, and a Go panic raised by a signal (an integer division by zero)
// is still a Go panic.
func TestSignalHandlersSurviveMPIAndOpenCL(t *testing.T) {
	if !mpitest.InRanks() {
		mpiRun(t, 2, 2*time.Minute)
		return
	}
	nodes, _ := declareRing(t, 8)
	if sig := sigstack.Missing(); sig != 0 {
		t.Errorf("rank %d: after MPI started, the handler of signal %d lacks SA_ONSTACK", op2.Rank(), sig)
	}
	must(op2.Partition(op2.BlockPartitioner()))
	if slices.Contains(allBackends, "opencl") {
		check(t, op2.Use("opencl"))
		d := must(op2.NewDat[float64](nodes, 1, nil, "d"))
		check(t, op2.ParLoop(op2.NewKernel("void one(double *d) { *d = 1; }", "one"), nodes, d.Arg(op2.Write)))
		check(t, op2.Use("sequential"))
	}
	if sig := sigstack.Missing(); sig != 0 {
		t.Errorf("rank %d: after OpenCL started, the handler of signal %d lacks SA_ONSTACK", op2.Rank(), sig)
	}
	zero, _ := strconv.Atoi(os.Getenv("OP2_TEST_UNSET")) // 0, unknown to the compiler
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic from an integer division by zero")
			}
		}()
		_ = 1 / zero
	}()
	check(t, op2.Finalize())
}

// TestMPITraceLog: OP2_LOG=trace logs each loop's start and end and each
// halo exchange, with the rank, so that a job's log shows where each rank
// stands.
func TestMPITraceLog(t *testing.T) {
	if !mpitest.InRanks() {
		out, err := mpitest.Output(t, 2, 2*time.Minute, "OP2_LOG=trace")
		if err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		for _, want := range []string{`level=TRACE msg="op2: loop start" kernel=avg set=edges rank=1`,
			`level=TRACE msg="op2: halo exchange" rank=0 kernel=avg dat=q neighbours=1`,
			`level=TRACE msg="op2: loop end" kernel=avg set=edges rank=0`} {
			if !strings.Contains(string(out), want) {
				t.Errorf("the log lacks %q:\n%s", want, out)
			}
		}
		return
	}
	nodes, m := declareRing(t, 8)
	must(op2.Partition(op2.BlockPartitioner()))
	q := must(op2.NewDat(nodes, 1, make([]float64, nodes.Size()), "q"))
	s := must(op2.NewDat[float64](m.From(), 1, nil, "s"))
	k := op2.NewKernel("void avg(const double *a, const double *b, double *s) { *s = *a + *b; }", "avg")
	check(t, op2.ParLoop(k, m.From(), q.ArgMap(op2.Read, m, 0), q.ArgMap(op2.Read, m, 1), s.Arg(op2.Write)))
	check(t, op2.Finalize())
}

// TestMPIAfterFinalize: after Finalize, on every rank, a loop (direct or
// not, recorded or run at once) and a collective call return an error
// saying MPI has ended, instead of an MPI call aborting the job; a second
// Finalize and reading local data still work.
func TestMPIAfterFinalize(t *testing.T) {
	if !mpitest.InRanks() {
		needHDF5(t)
		if out, err := mpitest.Output(t, 2, 2*time.Minute, "OP2_MPI_TIMEOUT=30s"); err != nil {
			t.Fatalf("job failed: %v\n%s", err, out)
		}
		return
	}
	nodes, edges := declareRing(t, 6)
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	g := must(op2.NewGlobal(1, []float64{0}, "g"))
	must(op2.Partition(op2.BlockPartitioner()))
	sum := op2.NewKernel("void af_sum(const double *x, double *g) { *g += *x; }", "af_sum")
	set := op2.NewKernel("void af_set(double *x) { *x = 1; }", "af_set")
	check(t, op2.ParLoop(set, nodes, x.Arg(op2.Write)))
	check(t, op2.ParLoop(sum, edges.From(), x.ArgMap(op2.Read, edges, 0), g.Arg(op2.Inc)))
	check(t, op2.Finalize())
	for _, c := range []struct {
		name string
		err  error
	}{
		{"an indirect loop with a reduction", op2.ParLoop(sum, edges.From(), x.ArgMap(op2.Read, edges, 0), g.Arg(op2.Inc))},
		{"a direct loop", op2.ParLoop(set, nodes, x.Arg(op2.Write))},
		{"a direct loop run at once", op2.Chain(func() error { return op2.ParLoop(set, nodes, x.Arg(op2.Write)) })},
		{"Gather", func() error { _, err := x.Gather(); return err }()},
		{"Checkpoint", op2.Checkpoint(t.TempDir()+"/c.h5", nil)},
		{"NewSubset", func() error { _, err := op2.NewSubset(nodes, []int32{0}); return err }()},
		{"NewSolver with PETSc", func() error { _, err := op2.NewSolver(op2.SolverOptions{Package: "petsc"}); return err }()},
		{"hdf5.Create", func() error {
			f, err := hdf5.Create(t.TempDir() + "/after.h5")
			if err == nil {
				f.Close()
			}
			return err
		}()},
	} {
		if c.err == nil || !strings.Contains(c.err.Error(), "MPI has ended") {
			t.Errorf("rank %d: %s after Finalize: %v, want an error saying MPI has ended", op2.Rank(), c.name, c.err)
		}
	}
	check(t, op2.Finalize())
	if v := x.DataRO(); len(v) == 0 || v[0] != 1 {
		t.Errorf("rank %d: x = %v after Finalize, want ones", op2.Rank(), v)
	}
}

// TestMPIStartTakesConfig: MPI starts with the program's configuration,
// not only the environment's: Config.CompileTimeout bounds the MPI
// compiler wrapper (one that hangs waited the 5-minute default), and the
// shim goes to Config.CacheDir (an unusable XDG_CACHE_HOME stopped it).
func TestMPIStartTakesConfig(t *testing.T) {
	if dir := os.Getenv("OP2_TEST_MPI_CONFIG_DIR"); dir != "" {
		check(t, op2.Configure(op2.Config{CompileTimeout: time.Second, CacheDir: dir}))
		start := time.Now()
		_, err := op2.NewSet(3, "s")
		if err == nil || !strings.Contains(err.Error(), "did not finish within 1s") || time.Since(start) > 30*time.Second {
			t.Fatalf("NewSet after %v: %v; want MPI refused, its shim's build stopped after 1s", time.Since(start), err)
		}
		return
	}
	dir := t.TempDir()
	hang := filepath.Join(dir, "mpicc")
	if err := os.WriteFile(hang, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	cmd := exec.Command(os.Args[0], "-test.run=^TestMPIStartTakesConfig$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OP2_TEST_MPI_CONFIG_DIR="+cache, "OMPI_COMM_WORLD_SIZE=1", "MPICC="+hang,
		"XDG_CACHE_HOME=/proc/nowhere", "OP2_CACHE_DIR=", "OP2_COMPILE_TIMEOUT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Errorf("the configured cache directory was not used: %v", err)
	}
}
