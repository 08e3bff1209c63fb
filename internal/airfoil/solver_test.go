package airfoil

import (
	"io"
	"math"
	"os"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testcache"
	"github.com/goop2/op2/internal/testreq"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

func TestMain(m *testing.M) { os.Exit(testcache.Run(m, "goop2-airfoil-pkg-cache-")) }

// TestRunLoop runs one iteration loop by loop through RunLoop and checks
// that it leaves Iterate's solution, on each host backend and opencl;
// then that bad names and counts give errors.
func TestRunLoop(t *testing.T) {
	m, err := mesh.Generate(6, 9)
	if err != nil {
		t.Fatal(err)
	}
	// One iteration, as Iterate runs it.
	steps := []string{"save_soln"}
	for k := 0; k < 2; k++ {
		steps = append(steps, "adt_calc", "res_calc", "bres_calc", "update")
	}
	for _, tc := range []struct {
		backend string
		threads int
	}{{"sequential", 1}, {"openmp", 2}, {"opencl", 0}} {
		t.Run(tc.backend, func(t *testing.T) {
			err := op2.Configure(op2.Config{Backend: tc.backend, Threads: tc.threads})
			if tc.backend == "opencl" {
				testreq.Check(t, "opencl", err, op2.ErrBackendUnavailable)
			} else if err != nil {
				t.Fatal(err)
			}
			solve := func(f func(s *Solver) error) []float64 {
				t.Helper()
				s, err := New(m)
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := f(s); err != nil {
					t.Fatal(err)
				}
				q, err := s.Q()
				if err != nil {
					t.Fatal(err)
				}
				return q
			}
			want := solve(func(s *Solver) error { _, _, err := s.Iterate(1, io.Discard); return err })
			got := solve(func(s *Solver) error {
				for _, name := range steps {
					if err := s.RunLoop(name, 1); err != nil {
						return err
					}
				}
				return nil
			})
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-12*math.Abs(want[i]) {
					t.Fatalf("q[%d] = %.17g loop by loop, %.17g by Iterate", i, got[i], want[i])
				}
			}
			// Repeated, each loop keeps the solution finite.
			q := solve(func(s *Solver) error {
				for _, name := range Loops {
					if err := s.RunLoop(name, 50); err != nil {
						return err
					}
				}
				return nil
			})
			for i, v := range q {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("q[%d] = %g after each loop 50 times", i, v)
				}
			}
		})
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		t.Fatal(err)
	}
	s, err := New(m)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, tc := range []struct {
		name string
		n    int
		want string
	}{
		{"res_calcx", 1, `unknown loop "res_calcx" (one of save_soln, adt_calc, res_calc, bres_calc, update)`},
		{"update", -1, "loop update -1 times: the count must not be negative"},
	} {
		err := s.RunLoop(tc.name, tc.n)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("RunLoop(%q, %d) = %v, want an error saying %q", tc.name, tc.n, err, tc.want)
		}
	}
	if err := s.RunLoop("update", 0); err != nil {
		t.Errorf("RunLoop(update, 0) = %v", err)
	}
}
