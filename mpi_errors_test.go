package op2_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
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
			want: []string{`subset of set "nodes"`, "not supported in distributed runs (2 MPI ranks)"},
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
			name: "mpicc-missing",
			env:  []string{"MPICC=/nonexistent/mpicc"},
			ranks: func(t *testing.T) error {
				_, err := op2.NewSet(4, "nodes")
				return err
			},
			want: []string{"/nonexistent/mpicc", "apt-get install openmpi-bin libopenmpi-dev", "MPICC"},
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
