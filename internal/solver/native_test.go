package solver

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/petsc"
)

// testArg, testDat and testGlobal stand for the API's argument, Dat and
// Global: SolveNative only calls their methods.
type testArg struct {
	acc core.Access
	of  any
}

type testDat struct {
	name   string
	vals   []float64
	zeroed int
}

func (d *testDat) Arg(acc core.Access) testArg    { return testArg{acc, d} }
func (g *testGlobal) Arg(acc core.Access) testArg { return testArg{acc, g} }

type testGlobal struct{ vals []float64 }

// testAPI counts what a native solve declares; its loops fail with
// errStop, which ends the solve at its first vector loop.
type testAPI struct {
	vecs, kernels, loops int
	diag                 []float64 // the inverse diagonal's values
	zeroRow              int       // a zero diagonal entry's row element, or -1
	made                 []*testDat
}

var errStop = errors.New("stop")

func (ta *testAPI) api(dim int) API[*testDat, *testGlobal, testArg, *string] {
	return API[*testDat, *testGlobal, testArg, *string]{
		NewVec: func(vals []float64, name string) (*testDat, error) {
			ta.vecs++
			d := &testDat{name: name, vals: make([]float64, 2*dim)}
			copy(d.vals, vals)
			ta.made = append(ta.made, d)
			return d, nil
		},
		NewGlobal: func(n int, name string) (*testGlobal, error) { return &testGlobal{vals: make([]float64, n)}, nil },
		NewKernel: func(source, name string) *string { ta.kernels++; return &source },
		ParLoop:   func(k *string, args ...testArg) error { ta.loops++; return errStop },
		Values:    func(g *testGlobal, write bool) ([]float64, error) { return g.vals, nil },
		Zero:      func(v *testDat) error { v.zeroed++; clear(v.vals); return nil },
		Fill:      func(v *testDat, vals []float64) error { copy(v.vals, vals); return nil },
		Mult:      func(x, y *testDat) error { return nil },
		InverseDiagonal: func() ([]float64, int, int, error) {
			return ta.diag, ta.zeroRow, 0, nil
		},
		Describe: func(v *testDat) string { return v.name },
		Err:      func(err error) error { return fmt.Errorf("api: %w", err) },
	}
}

// TestSolveNativeReusesWork: a second solve on the same set and dim
// declares no vector and no kernel (the loops are the same), and the
// Jacobi preconditioner's inverse diagonal is refilled in place; a zero
// diagonal entry is an error naming the matrix and the scalar row.
func TestSolveNativeReusesWork(t *testing.T) {
	for _, method := range []string{"cg", "bicgstab"} {
		t.Run(method, func(t *testing.T) {
			var n Native[*testDat, *string]
			ta := &testAPI{diag: []float64{1, 2, 3, 4}, zeroRow: -1}
			opts := Options{Method: method, Precond: "jacobi", RTol: 1e-8, MaxIts: 10, Norm: petsc.NormUnpreconditioned}
			x, b := &testDat{name: "x", vals: make([]float64, 4)}, &testDat{name: "b", vals: []float64{1, 1, 1, 1}}
			set := new(int)
			for solve := range 2 {
				if _, err := SolveNative(&n, ta.api(2), set, 2, opts, "mat A", x, b); !errors.Is(err, errStop) {
					t.Fatalf("solve %d: error %v, want the loop's", solve, err)
				}
				if solve == 0 {
					if len(n.work[workKey{set, 2}].vecs) == 0 {
						t.Fatal("the first solve kept no work vector")
					}
					continue
				}
				if ta.vecs != len(n.work[workKey{set, 2}].vecs)+1 || ta.kernels != 1 {
					t.Errorf("after two solves: %d vectors and %d kernels declared, want the first solve's (%d and 1)",
						ta.vecs, ta.kernels, len(n.work[workKey{set, 2}].vecs)+1)
				}
			}
			if d := ta.made[0]; d.name != "solver inverse diagonal" || fmt.Sprint(d.vals) != "[1 2 3 4]" {
				t.Errorf("inverse diagonal %q = %v", d.name, d.vals)
			}
			ta.zeroRow = 1
			_, err := SolveNative(&n, ta.api(2), set, 2, opts, "mat A", x, b)
			want := `api: Solve: mat A has a zero diagonal entry in scalar row 2 (row element 1, component 0)`
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("zero diagonal: error %v, want %q…", err, want)
			}
		})
	}
}
