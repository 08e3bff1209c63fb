package solver

import "testing"

// fusedOps records the loop Loop is asked for; nothing else is called.
type fusedOps struct {
	Ops[*int]
	name, params, body string
	vecs               int
	withDiag           bool
}

func (f *fusedOps) Loop(name, params, body string, coefs []float64, args []Arg[*int]) ([]float64, error) {
	f.name, f.params, f.body = name, params, body
	for _, a := range args {
		f.vecs += btoi(a.Kind == Vector)
		f.withDiag = f.withDiag || a.Kind == Diag
	}
	return []float64{0, 0}, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestVecLoop: a vector passed twice is one parameter whose second name
// is an alias, and PRE(z, s) is the preconditioner's product with Jacobi
// (then d is a parameter and the kernel's name says so) and nothing
// without.
func TestVecLoop(t *testing.T) {
	s, z, x := new(int), new(int), new(int)
	type loop struct {
		name, params, body string
		vecs               int
	}
	for _, jacobi := range []bool{false, true} {
		f := &fusedOps{}
		k := &krylov[*int]{ops: f, jacobi: jacobi}
		zz, want := s, loop{"step", "const double *a, double *s, const double *x, double *acc",
			"double *const z = s; (void)z;  acc[0] += s[k];", 2}
		if jacobi {
			zz, want = z, loop{"stepj", "const double *a, double *s, const double *x, double *z, const double *d, double *acc",
				"z[k] = d[k] * s[k]; acc[0] += s[k];", 3}
		}
		if _, err := k.vecLoop("step", []float64{1}, "PRE(z, s) acc[0] += s[k];",
			[]Vec[*int]{{"s", s, RW}, {"x", x, Read}, {"z", zz, Write}}); err != nil {
			t.Fatal(err)
		}
		if got := (loop{f.name, f.params, f.body, f.vecs}); got != want || f.withDiag != jacobi {
			t.Errorf("jacobi %v: loop %+v with d %v; want %+v", jacobi, got, f.withDiag, want)
		}
	}
}
