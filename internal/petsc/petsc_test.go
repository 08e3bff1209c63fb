package petsc

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/sigstack"
	"github.com/goop2/op2/internal/testreq"
)

// needLibrary skips t when PETSc cannot be loaded here.
func needLibrary(t *testing.T) *library {
	t.Helper()
	l, err := load()
	testreq.Check(t, "petsc", err, ErrUnavailable)
	return l
}

func TestLoad(t *testing.T) {
	l := needLibrary(t)
	if l.intBytes != 4 && l.intBytes != 8 {
		t.Fatalf("PetscInt of %d bytes", l.intBytes)
	}
	if !strings.HasPrefix(l.version, "3.") {
		t.Errorf("PETSc version %s, want 3.x", l.version)
	}
	if strings.HasPrefix(filepath.Base(l.path), "libpetsc_real") && l.intBytes != 4 {
		t.Errorf("%s has a PetscInt of %d bytes; Debian's real build has 4", l.path, l.intBytes)
	}
	t.Logf("PETSc %s from %s: PetscInt is %d bytes", l.version, l.path, l.intBytes)
}

// withoutLoaded runs f as if this process had loaded no PETSc.
func withoutLoaded(t *testing.T, f func()) {
	state.Lock()
	saved := state.lib
	state.lib.Forget()
	state.Unlock()
	defer func() {
		state.Lock()
		state.lib = saved
		state.Unlock()
	}()
	f()
}

func TestLoadMissingLibrary(t *testing.T) {
	for _, path := range []string{"/nonexistent", "/nonexistent/libpetsc_real.so.3.18"} {
		t.Run(path, func(t *testing.T) {
			t.Setenv(LibraryEnv, path)
			withoutLoaded(t, func() {
				err := Load()
				t.Log(err)
				if !errors.Is(err, ErrUnavailable) {
					t.Fatalf("Load with %s=%s: %v, want an error wrapping ErrUnavailable", LibraryEnv, path, err)
				}
				for _, want := range []string{"apt-get install libpetsc-real3.18 libopenmpi-dev", LibraryEnv, path} {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not say %q", err, want)
					}
				}
				if again := Load(); again != err {
					t.Errorf("second Load: %v, want the remembered %v", again, err)
				}
			})
		})
	}
}

func TestLoadRefusesComplex(t *testing.T) {
	withoutLoaded(t, func() {
		t.Setenv(LibraryEnv, "/usr/lib/libpetsc_complex.so.3.18")
		err := Load()
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "complex build") {
			t.Fatalf("Load of a complex build: %v", err)
		}
	})
}

func TestCandidates(t *testing.T) {
	if got := candidates("/opt/petsc/lib/libpetsc.so"); !slices.Equal(got, []string{"/opt/petsc/lib/libpetsc.so"}) {
		t.Errorf("candidates of a named library: %v", got)
	}
	got := candidates("")
	if len(got) == 0 || got[0] != "libpetsc_real.so.3.18" {
		t.Errorf("default candidates %v do not start with Debian's libpetsc_real.so.3.18", got)
	}
	for _, c := range got {
		if strings.Contains(c, "complex") {
			t.Errorf("default candidate %s is a complex build", c)
		}
	}
}

// laplacian returns the CSR pattern of the 1-D Laplacian on n block
// rows with bs×bs blocks: tridiag(-1, 2+shift, -1) in each component,
// plus coupling between the components of a block (0.5 off the block's
// diagonal), and its values; it is positive definite for shift > 0.5.
func laplacian(n, bs int, shift float64) (rowptr, colidx []int32, vals []float64) {
	rowptr = []int32{0}
	for r := 0; r < n; r++ {
		for c := r - 1; c <= r+1; c++ {
			if c < 0 || c >= n {
				continue
			}
			colidx = append(colidx, int32(c))
			for a := 0; a < bs; a++ {
				for b := 0; b < bs; b++ {
					v := 0.0
					switch {
					case c == r && a == b:
						v = 2 + shift
					case c == r:
						v = 0.5
					case a == b:
						v = -1
					}
					vals = append(vals, v)
				}
			}
		}
		rowptr = append(rowptr, int32(len(colidx)))
	}
	return rowptr, colidx, vals
}

// mult is y = A x for laplacian's blocks.
func mult(rowptr, colidx []int32, vals []float64, bs int, x []float64) []float64 {
	y := make([]float64, len(x))
	for r := 0; r+1 < len(rowptr); r++ {
		for k := rowptr[r]; k < rowptr[r+1]; k++ {
			c := int(colidx[k])
			for a := 0; a < bs; a++ {
				for b := 0; b < bs; b++ {
					y[r*bs+a] += vals[(int(k)*bs+a)*bs+b] * x[c*bs+b]
				}
			}
		}
	}
	return y
}

// TestSolve initialises MPI (a world of one) and PETSc in this process,
// solves systems of scalar and 2×2-block matrices, checks that options
// under the solver's prefix change what runs, that divergence shows in
// the reason, that the preallocation was exact, that no signal handler
// changed, and finalises PETSc and MPI.
func TestSolve(t *testing.T) {
	needLibrary(t)
	before := sigstack.Handlers()
	w, err := mpi.Init(t.TempDir(), 0)
	testreq.Check(t, "mpi", err, mpi.ErrUnavailable)
	afterMPI := sigstack.Handlers()
	if before != afterMPI {
		t.Errorf("MPI_Init changed signal handlers")
	}
	t.Setenv("PETSC_OPTIONS", "-ksp_type richardson -ksp_max_it 1")
	if err := Init(w); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := Finalize(); err != nil {
			t.Error(err)
		}
		if err := Init(w); err == nil {
			t.Error("Init after Finalize succeeded")
		}
		if err := w.Finalize(); err != nil {
			t.Error(err)
		}
	}()
	if after := sigstack.Handlers(); after != before {
		for i := range after {
			if after[i] != before[i] {
				t.Errorf("signal %d: handler %+v before PETSc started, %+v after", i+1, before[i], after[i])
			}
		}
	}
	seq := 0
	solve := func(t *testing.T, n, bs int, shift float64, c KSPConfig, options string) (Result, []float64, []float64, *KSP, *Mat) {
		t.Helper()
		seq++
		c.Prefix = "t" + string(rune('a'+seq)) + "_"
		if options != "" {
			if err := SetOptions(c.Prefix, options); err != nil {
				t.Fatal(err)
			}
		}
		rowptr, colidx, vals := laplacian(n, bs, shift)
		gcol := make([]int64, n)
		for i := range gcol {
			gcol[i] = int64(i)
		}
		A, err := NewMat(c.Prefix, bs, rowptr, colidx, gcol, 0, int64(n))
		if err != nil {
			t.Fatal(err)
		}
		if err := A.SetValues(vals); err != nil {
			t.Fatal(err)
		}
		k, err := NewKSP(A, int64(n), c)
		if err != nil {
			t.Fatal(err)
		}
		xs := make([]float64, n*bs)
		for i := range xs {
			xs[i] = math.Sin(float64(i))
		}
		b := mult(rowptr, colidx, vals, bs, xs)
		x := make([]float64, n*bs)
		res, err := k.Solve(x, b)
		if err != nil {
			t.Fatal(err)
		}
		return res, x, xs, k, A
	}
	for _, tt := range []struct {
		name    string
		bs      int
		c       KSPConfig
		options string
		ksp, pc string
		norm    NormType // the norm PETSc used
	}{
		{"scalar cg jacobi", 1, KSPConfig{KSPType: "cg", PCType: "jacobi"}, "", "cg", "jacobi", NormPreconditioned},
		{"block bcgs none", 2, KSPConfig{KSPType: "bcgs", PCType: "none"}, "", "bcgs", "none", NormPreconditioned},
		{"options gmres over cg", 1, KSPConfig{KSPType: "cg", PCType: "jacobi"}, "-ksp_type gmres -pc_type none", "gmres", "none", NormPreconditioned},
		{"baij block", 2, KSPConfig{KSPType: "cg", PCType: "jacobi"}, "-mat_type baij", "cg", "jacobi", NormPreconditioned},
		{"cg unpreconditioned", 1, KSPConfig{KSPType: "cg", PCType: "jacobi", Norm: NormUnpreconditioned}, "", "cg", "jacobi", NormUnpreconditioned},
		{"bcgs unpreconditioned", 2, KSPConfig{KSPType: "bcgs", PCType: "jacobi", Norm: NormUnpreconditioned}, "", "bcgs", "jacobi", NormUnpreconditioned},
		{"options natural over unpreconditioned", 1, KSPConfig{KSPType: "cg", PCType: "jacobi", Norm: NormUnpreconditioned}, "-ksp_norm_type natural", "cg", "jacobi", NormNatural},
		{"direct lu", 2, KSPConfig{KSPType: "preonly", PCType: "lu"}, "", "preonly", "lu", NormNone},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tt.c.RTol, tt.c.MaxIts = 1e-12, 1000
			res, x, xs, k, A := solve(t, 50, tt.bs, 0.6, tt.c, tt.options)
			if res.Reason <= 0 || !strings.HasPrefix(res.ReasonName, "CONVERGED") || res.Norm != tt.norm {
				t.Fatalf("%+v, want converged in the %v norm", res, tt.norm)
			}
			for i := range x {
				if math.Abs(x[i]-xs[i]) > 1e-8 {
					t.Fatalf("x[%d] = %v, want %v (%+v)", i, x[i], xs[i], res)
				}
			}
			kt, pt, err := k.Types()
			if err != nil || kt != tt.ksp || pt != tt.pc {
				t.Errorf("types %q %q (%v), want %q %q", kt, pt, err, tt.ksp, tt.pc)
			}
			info, err := A.Info()
			if err != nil || info.Mallocs != 0 || info.NonzerosUnneeded != 0 || info.NonzerosUsed == 0 {
				t.Errorf("MatGetInfo: %+v, %v; want no mallocs, nothing unneeded", info, err)
			}
			if mt, _ := A.Type(); tt.options == "-mat_type baij" && mt != "seqbaij" && mt != "mpibaij" {
				t.Errorf("-mat_type baij made a %s matrix", mt)
			}
			t.Logf("%+v %s/%s", res, kt, pt)
			if err := k.Destroy(); err != nil {
				t.Error(err)
			}
			if err := A.Destroy(); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("iterations run out", func(t *testing.T) {
		res, _, _, _, _ := solve(t, 50, 1, 0, KSPConfig{KSPType: "cg", PCType: "none", RTol: 1e-12, MaxIts: 2}, "")
		if res.ReasonName != "DIVERGED_ITS" || res.Iterations != 2 {
			t.Errorf("%+v, want DIVERGED_ITS after 2 iterations", res)
		}
	})
	t.Run("indefinite", func(t *testing.T) {
		// CG on a matrix with negative eigenvalues.
		res, _, _, _, _ := solve(t, 50, 1, -3, KSPConfig{KSPType: "cg", PCType: "jacobi", RTol: 1e-12, MaxIts: 200}, "")
		if res.Reason >= 0 || !strings.HasPrefix(res.ReasonName, "DIVERGED_INDEFINITE") {
			t.Errorf("%+v, want DIVERGED_INDEFINITE_*", res)
		}
	})
	t.Run("bad option", func(t *testing.T) {
		err := SetOptions("bad_", "-ksp_type nosuchtype")
		if err != nil {
			t.Fatal(err)
		}
		rowptr, colidx, _ := laplacian(4, 1, 0)
		A, err := NewMat("bad_", 1, rowptr, colidx, []int64{0, 1, 2, 3}, 0, 4)
		if err != nil {
			t.Fatal(err)
		}
		_, err = NewKSP(A, 4, KSPConfig{Prefix: "bad_", RTol: 1e-8, MaxIts: 10})
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), "nosuchtype") {
			t.Errorf("an unknown KSP type: %v, want PETSc's error naming it", err)
		}
	})
	if os.Getenv("PETSC_OPTIONS") == "" {
		t.Error("PETSC_OPTIONS unset")
	}
}

// TestOtherIndexWidth runs TestLoad and TestSolve again in a process that
// loads the other width of PetscInt, where a build of it is installed
// (Debian's libpetsc64-real3.18 next to its default 32-bit one).
func TestOtherIndexWidth(t *testing.T) {
	l := needLibrary(t)
	if os.Getenv(LibraryEnv) != "" {
		t.Skipf("%s chose the library already", LibraryEnv)
	}
	pattern := "/usr/lib/*/libpetsc64_real.so.3.*"
	if l.intBytes == 8 {
		pattern = "/usr/lib/*/libpetsc_real.so.3.*"
	}
	other, _ := filepath.Glob(pattern)
	if len(other) == 0 {
		t.Skipf("no PETSc with the other PetscInt width (%s; Debian: libpetsc64-real3.18) is installed", pattern)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^(TestLoad|TestSolve)$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), LibraryEnv+"="+other[0])
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("PetscInt is %d bytes", 12-l.intBytes)) {
		t.Fatalf("with %s=%s: %v\n%s", LibraryEnv, other[0], err, out)
	}
}
