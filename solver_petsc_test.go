package op2_test

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/petsc"
	"github.com/goop2/op2/internal/sigstack"
	"github.com/goop2/op2/internal/testreq"
)

// needPETSc skips t when the PETSc library cannot be loaded here (the
// README's test command installs it: scripts/test-all).
func needPETSc(t *testing.T) {
	t.Helper()
	testreq.Check(t, "petsc", petsc.Load(), petsc.ErrUnavailable)
}

// system is A x = b on a random graph's nodes with dim values each: A is
// the graph Laplacian plus shift times the identity, plus (with skew) a
// nonsymmetric part, and coupling between a node's components; b = A x*.
type system struct {
	A        *op2.Mat[float64]
	x, b, xs *op2.Dat[float64]
	assemble func() error // adds the element matrices into A again
}

func newSystem(t *testing.T, nn, dim int, shift float64, skew bool) system {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, uint64(nn*dim)))
	var tab []int32
	for i := 1; i < nn; i++ {
		tab = append(tab, int32(rng.IntN(i)), int32(i))
	}
	nodes := must(op2.NewSet(nn, "nodes"))
	edges := must(op2.NewSet(len(tab)/2, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, tab, "pedge"))
	ident := must(op2.NewMap(nodes, nodes, 1, iota32[int32](nn), "ident"))
	sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pedge, Col: pedge}, {Row: ident, Col: ident}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	d, off := strconv.Itoa(dim), "-1"
	if skew {
		off = "-0.5"
	}
	edge := op2.NewKernel(`
void edge(double *A) {
  const int d = `+d+`;
  for (int a = 0; a < d; a++) {
    A[a * 2 * d + a] += 1; A[a * 2 * d + d + a] = `+off+`;
    A[(d + a) * 2 * d + a] = -1; A[(d + a) * 2 * d + d + a] += 1;
  }
}`, "edge")
	node := op2.NewKernel(`
void node(double *A) {
  const int d = `+d+`;
  for (int a = 0; a < d; a++)
    for (int b = 0; b < d; b++) A[a * d + b] = a == b ? `+strconv.FormatFloat(shift, 'g', -1, 64)+` : 0.25;
}`, "node")
	assemble := func() error {
		return errors.Join(op2.ParLoop(edge, edges, A.Arg(op2.Inc, pedge, pedge)), op2.ParLoop(node, nodes, A.Arg(op2.Inc, ident, ident)))
	}
	check(t, assemble())
	xs := make([]float64, nn*dim)
	for i := range xs {
		xs[i] = float64(rng.IntN(9)) - 4
	}
	s := system{A: A, xs: must(op2.NewDat(nodes, dim, xs, "x*")), x: must(op2.NewDat[float64](nodes, dim, nil, "x")),
		b: must(op2.NewDat[float64](nodes, dim, nil, "b")), assemble: assemble}
	check(t, A.Mult(s.xs, s.b))
	return s
}

// solve solves s with opts from x = 0 and returns the solution, or
// NewSolver's or Solve's error.
func (s system) solve(t *testing.T, opts op2.SolverOptions) ([]float64, op2.SolveInfo, error) {
	t.Helper()
	return s.solveFrom(t, opts, nil)
}

// TestPETScSolve: PETSc's solution equals the native solver's and x*, for
// scalar and 2×2-block matrices, symmetric (CG) and not (BiCGStab), AIJ
// and BAIJ; options under the solver's prefix choose what runs.
func TestPETScSolve(t *testing.T) {
	needPETSc(t)
	for _, tt := range []struct {
		name            string
		dim             int
		skew            bool
		method, precond string
		options         string
		ksp, pc         string
	}{
		{"scalar cg", 1, false, "cg", "jacobi", "", "cg", "jacobi"},
		{"block cg", 2, false, "cg", "jacobi", "", "cg", "jacobi"},
		{"block bicgstab", 2, true, "bicgstab", "none", "", "bcgs", "none"},
		{"block baij", 2, true, "bicgstab", "jacobi", "-mat_type baij", "bcgs", "jacobi"},
		{"options gmres", 1, true, "bicgstab", "jacobi", "-ksp_type gmres -pc_type none -ksp_gmres_restart 200", "gmres", "none"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSystem(t, 60, tt.dim, 2, tt.skew)
			native, ninfo, err := s.solve(t, op2.SolverOptions{Method: tt.method, Precond: tt.precond, RTol: 1e-12})
			check(t, err)
			got, info, err := s.solve(t, op2.SolverOptions{Package: "petsc", Method: tt.method, Precond: tt.precond,
				RTol: 1e-12, PETScOptions: tt.options})
			check(t, err)
			if !info.Converged || !strings.HasPrefix(info.Reason, "CONVERGED_") || info.Method != tt.ksp || info.Precond != tt.pc {
				t.Errorf("PETSc: %+v; want converged with %s/%s", info, tt.ksp, tt.pc)
			}
			xs := s.xs.DataRO()
			for i := range got {
				if math.Abs(got[i]-native[i]) > 1e-8 || math.Abs(got[i]-xs[i]) > 1e-8 {
					t.Fatalf("x[%d]: PETSc %v, native %v, exact %v", i, got[i], native[i], xs[i])
				}
			}
			t.Logf("native %+v; PETSc %+v", ninfo, info)
		})
	}
}

// TestPETScDirectSolve: PETSc's direct solvers (KSP preonly with an LU
// or Cholesky factorisation, PETSc's own and MUMPS's) solve an SPD
// system, scalar and 2×2-block, from whatever x holds, as GoOP2's CG
// does.
func TestPETScDirectSolve(t *testing.T) {
	needPETSc(t)
	for _, tt := range []struct {
		name, precond, options string
		dim                    int
	}{
		{"lu", "lu", "", 1},
		{"lu block", "lu", "", 2},
		{"cholesky", "cholesky", "", 1},
		{"cholesky block", "cholesky", "", 2},
		{"mumps lu", "lu", "-pc_factor_mat_solver_type mumps", 2},
		{"mumps cholesky", "cholesky", "-pc_factor_mat_solver_type mumps", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSystem(t, 60, tt.dim, 2, false)
			native, _, err := s.solve(t, op2.SolverOptions{RTol: 1e-12})
			check(t, err)
			native = slices.Clone(native)
			garbage := make([]float64, len(native))
			for i := range garbage {
				garbage[i] = 1e3 * float64(i%7-3)
			}
			got, info, err := s.solveFrom(t, op2.SolverOptions{Package: "petsc", Method: "preonly", Precond: tt.precond, PETScOptions: tt.options}, garbage)
			if err != nil && strings.Contains(err.Error(), "Could not locate solver type") && !testreq.Required(t, "petsc") {
				// A PETSc built without MUMPS (Debian's has it: under
				// OP2_REQUIRE=petsc the error fails the test).
				t.Skipf("this PETSc lacks the solver: %v", err)
			}
			check(t, err)
			if !info.Converged || info.Method != "preonly" || info.Precond != tt.precond || info.Iterations != 1 || info.Norm != op2.NormNone {
				t.Errorf("%+v; want converged in one iteration of preonly/%s, measuring no norm", info, tt.precond)
			}
			for i := range got {
				if math.Abs(got[i]-native[i]) > 1e-9 {
					t.Fatalf("x[%d]: PETSc %s %v, native CG %v", i, tt.name, got[i], native[i])
				}
			}
			t.Logf("%+v", info)
		})
	}
}

// TestPETScStartsInNewSolver: in a fresh process, NewSolver starts PETSc
// (so the first Solve's time is the solve's), and the first Solve with
// each matrix reports the time it took to hand the matrix to PETSc and
// make its KSP in SolveInfo.Setup, later ones none.
func TestPETScStartsInNewSolver(t *testing.T) {
	needPETSc(t)
	if !inChild() {
		if out := runChild(t); !strings.Contains(out, "--- PASS") {
			t.Errorf("the child did not pass:\n%s", out)
		}
		return
	}
	s, other := newSystem(t, 40, 1, 2, false), newSystem(t, 30, 2, 2, false)
	native := must(must(op2.NewSolver(op2.SolverOptions{})).Solve(s.A, s.x, s.b))
	if petsc.Initialized() || native.Setup != 0 {
		t.Fatalf("PETSc started before a PETSc solver was made, or the native solve reports set-up: %+v", native)
	}
	sv := must(op2.NewSolver(op2.SolverOptions{Package: "petsc", RTol: 1e-12}))
	if !petsc.Initialized() {
		t.Error("NewSolver did not start PETSc")
	}
	var setup []time.Duration
	for _, sys := range []system{s, s, other, other} {
		check(t, sys.x.Zero())
		info := must(sv.Solve(sys.A, sys.x, sys.b))
		setup = append(setup, info.Setup)
	}
	if setup[0] <= 0 || setup[1] != 0 || setup[2] <= 0 || setup[3] != 0 {
		t.Errorf("set-up of the solves with A, A, B, B: %v; want some for the first with each matrix only", setup)
	}
	check(t, sv.Close())
	check(t, op2.Finalize())
}

// TestPETScManySolvers: a solver's Close removes its PETSc options, so a
// program may make solvers one after another: PETSc's database holds 512
// options, and the 256th solver with two options failed.
func TestPETScManySolvers(t *testing.T) {
	needPETSc(t)
	s := newSystem(t, 30, 1, 2, false)
	for i := range 300 {
		sv, err := op2.NewSolver(op2.SolverOptions{Package: "petsc", RTol: 1e-12, PETScOptions: "-ksp_rtol 1e-10 -pc_type jacobi"})
		if err != nil {
			t.Fatalf("solver %d: %v", i+1, err)
		}
		if i%100 == 99 {
			check(t, s.x.Zero())
			if _, err := sv.Solve(s.A, s.x, s.b); err != nil {
				t.Fatalf("solver %d: %v", i+1, err)
			}
		}
		check(t, sv.Close())
	}
}

// TestPETScSolveReuse: a second solve with the same solver and matrix,
// after the matrix changed, uses the new values.
func TestPETScSolveReuse(t *testing.T) {
	needPETSc(t)
	s := newSystem(t, 40, 1, 2, false)
	sv := must(op2.NewSolver(op2.SolverOptions{Package: "petsc", RTol: 1e-12}))
	defer func() { check(t, sv.Close()) }()
	for round := range 2 {
		check(t, s.x.Zero())
		info, err := sv.Solve(s.A, s.x, s.b)
		check(t, err)
		x, xs := s.x.DataRO(), s.xs.DataRO()
		for i := range x {
			if want := xs[i] / float64(round+1); math.Abs(x[i]-want) > 1e-8 {
				t.Fatalf("round %d: x[%d] = %v, want %v (%+v)", round, i, x[i], want, info)
			}
		}
		// Doubling A halves the solution.
		check(t, s.assemble())
	}
}

// TestPETScDivergence: CG on an indefinite matrix is an error naming
// PETSc's reason, with the SolveInfo filled; running out of iterations
// (MaxIts) is not an error, as with the native solver, but Converged
// false with the reason DIVERGED_ITS.
func TestPETScDivergence(t *testing.T) {
	needPETSc(t)
	s := newSystem(t, 50, 1, -3, false)
	_, info, err := s.solve(t, op2.SolverOptions{Package: "petsc", Method: "cg", Precond: "none", RTol: 1e-12})
	t.Log(err)
	if err == nil || !strings.Contains(err.Error(), "DIVERGED_INDEFINITE") || info.Converged || !strings.HasPrefix(info.Reason, "DIVERGED_INDEFINITE") {
		t.Errorf("CG on an indefinite matrix: %+v, %v; want an error naming DIVERGED_INDEFINITE_*", info, err)
	}
	s = newSystem(t, 50, 1, 2, false)
	for _, its := range []int{1, 3} {
		_, info, err = s.solve(t, op2.SolverOptions{Package: "petsc", RTol: 1e-14, MaxIts: its})
		if err != nil || info.Converged || info.Reason != "DIVERGED_ITS" || info.Iterations != its {
			t.Errorf("MaxIts %d: %+v, %v; want %d iterations, not converged, DIVERGED_ITS, no error", its, info, err, its)
		}
	}
	for _, c := range []struct {
		o    op2.SolverOptions
		want string
	}{
		{op2.SolverOptions{Package: "petsc", Method: "nosuchksp"}, "nosuch"},
		{op2.SolverOptions{Package: "petsc", PETScOptions: "-pc_type nosuchpc"}, "nosuch"},
		// Not PETSc's "New nonzero ... caused a malloc" at the first solve.
		{op2.SolverOptions{Package: "petsc", PETScOptions: "-mat_type sbaij -pc_type cholesky"}, "matrix type seqsbaij (-mat_type) is not supported"},
	} {
		_, _, err := s.solve(t, c.o)
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.o, err, c.want)
		}
	}
}

// TestPETScOptionsChecked: options NewSolver can refuse alone.
func TestPETScOptionsChecked(t *testing.T) {
	for _, o := range []op2.SolverOptions{
		{Package: "PETSc"},
		{PETScOptions: "-ksp_type gmres"},
		{Package: "petsc", Method: "-ksp_type gmres"},
	} {
		if _, err := op2.NewSolver(o); err == nil {
			t.Errorf("NewSolver(%+v) succeeded", o)
		}
	}
}

// inChild reports whether this process is the child a test started with
// runChild.
func inChild() bool { return os.Getenv("OP2_PETSC_CHILD") != "" }

// runChild runs the current test in a new process of the test binary
// with env, and returns its output.
func runChild(t *testing.T, env ...string) string {
	t.Helper()
	name, _, _ := strings.Cut(t.Name(), "/")
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), "OP2_PETSC_CHILD=1"), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the child process failed: %v\n%s", err, out)
	}
	return string(out)
}

// TestPETScMissingLibrary: without the library, or without the MPI
// compiler wrapper its shim is built with, NewSolver returns an error
// that says what to install.
func TestPETScMissingLibrary(t *testing.T) {
	if !inChild() {
		for _, env := range []string{petsc.LibraryEnv + "=/nonexistent/libpetsc_real.so.3.18", "MPICC=/nonexistent/mpicc"} {
			t.Run(env, func(t *testing.T) {
				if strings.HasPrefix(env, "MPICC") {
					needPETSc(t)
				}
				runChild(t, env, "OP2_PETSC_CHILD_ENV="+env)
			})
		}
		return
	}
	_, value, _ := strings.Cut(os.Getenv("OP2_PETSC_CHILD_ENV"), "=")
	_, err := op2.NewSolver(op2.SolverOptions{Package: "petsc"})
	t.Log(err)
	if !errors.Is(err, op2.ErrPETScUnavailable) || !strings.Contains(err.Error(), "apt-get install libpetsc-real3.18 libopenmpi-dev") ||
		!strings.Contains(err.Error(), value) {
		t.Errorf("NewSolver without PETSc: %v; want ErrPETScUnavailable saying what to install and naming %s", err, value)
	}
	check(t, op2.Finalize())
}

// TestPETScSignalsAndEnvironment: in a fresh process, whose environment
// has PETSC_OPTIONS that would change an unprefixed solver, a PETSc
// solve leaves every signal handler as it was (Go's), a nil pointer
// dereference is still a Go panic, the solution is right, and Finalize
// ends PETSc and the MPI started for it.
func TestPETScSignalsAndEnvironment(t *testing.T) {
	needPETSc(t)
	if !inChild() {
		out := runChild(t, "PETSC_OPTIONS=-ksp_type richardson -pc_type none -ksp_max_it 1 -ksp_rtol 0.5")
		if !strings.Contains(out, "--- PASS") {
			t.Errorf("the child did not pass:\n%s", out)
		}
		return
	}
	s := newSystem(t, 50, 2, 2, false)
	// After the set-up, whose loops started the compilers and backends.
	before := sigstack.Handlers()
	x, info, err := s.solve(t, op2.SolverOptions{Package: "petsc", RTol: 1e-12})
	check(t, err)
	if after := sigstack.Handlers(); after != before {
		for i := range after {
			if after[i] != before[i] {
				t.Errorf("signal %d: handler %+v before PETSc started, %+v after", i+1, before[i], after[i])
			}
		}
	}
	if sig := sigstack.Missing(); sig != 0 {
		t.Errorf("after PETSc started, the handler of signal %d lacks SA_ONSTACK", sig)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("no panic from a nil pointer dereference")
			}
		}()
		var p *system
		_ = p.A
	}()
	if !info.Converged || info.Method != "cg" || info.Iterations < 2 {
		t.Errorf("%+v: PETSC_OPTIONS changed GoOP2's solver", info)
	}
	xs := s.xs.DataRO()
	for i := range x {
		if math.Abs(x[i]-xs[i]) > 1e-8 {
			t.Fatalf("x[%d] = %v, want %v", i, x[i], xs[i])
		}
	}
	// A solver still open when PETSc ends has nothing left to free.
	open := must(op2.NewSolver(op2.SolverOptions{Package: "petsc"}))
	must(open.Solve(s.A, s.x, s.b))
	check(t, op2.Finalize())
	check(t, open.Close())
	if _, _, err := s.solve(t, op2.SolverOptions{Package: "petsc"}); err == nil || !errors.Is(err, op2.ErrPETScUnavailable) {
		t.Errorf("a PETSc solve after Finalize: %v, want an error", err)
	}
}

// TestPETScDeviceData: on every backend, b made by a loop (on a device
// backend, on the device) and the initial guess x reach PETSc, and the
// solution PETSc writes into x's host values is what later loops read
// (the device copy of x went stale).
func TestPETScDeviceData(t *testing.T) {
	needPETSc(t)
	s := newSystem(t, 30, 2, 2, false)
	copyK := op2.NewKernel("void cp(const double *a, double *b) { b[0] = a[0]; b[1] = a[1]; }", "cp")
	twice := op2.NewKernel("void twice(const double *a, double *b) { b[0] = 2 * a[0]; b[1] = 2 * a[1]; }", "twice")
	nodes := s.x.Set()
	b2 := must(op2.NewDat[float64](nodes, 2, nil, "b2"))
	y := must(op2.NewDat[float64](nodes, 2, nil, "y"))
	onEachBackend(t, func(t *testing.T) {
		// From x's values (a poor guess on the device, brought to the
		// host), and from zero (x on the device, never read).
		for _, guess := range []bool{true, false} {
			check(t, op2.ParLoop(copyK, nodes, s.b.Arg(op2.Read), b2.Arg(op2.Write)))
			check(t, op2.ParLoop(copyK, nodes, s.b.Arg(op2.Read), s.x.Arg(op2.Write)))
			sv := must(op2.NewSolver(op2.SolverOptions{Package: "petsc", RTol: 1e-12, InitialGuessNonzero: guess}))
			info := must(sv.Solve(s.A, s.x, b2))
			check(t, sv.Close())
			check(t, op2.ParLoop(twice, nodes, s.x.Arg(op2.Read), y.Arg(op2.Write)))
			got, xs := y.DataRO(), s.xs.DataRO()
			for i := range got {
				if math.Abs(got[i]-2*xs[i]) > 1e-8 {
					t.Fatalf("guess %v: 2x[%d] = %v after the solve, want %v (%+v)", guess, i, got[i], 2*xs[i], info)
				}
			}
		}
	})
}

// TestPETScUnusedOptions: options no PETSc object looked up in the first
// solve (a misspelt name, an option of a preconditioner the solve does
// not have, one in a file that -options_file names) are named in a
// warning, once per solver; options it used are not, nor
// -options_file, which PETSc reads itself.
func TestPETScUnusedOptions(t *testing.T) {
	needPETSc(t)
	var log bytes.Buffer
	check(t, op2.Configure(op2.Config{Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelWarn}))}))
	s := newSystem(t, 30, 1, 2, false)
	file := filepath.Join(t.TempDir(), "opts")
	check(t, os.WriteFile(file, []byte("-ksp_type cg\n-pc_type jacobi\n-ksp_monitr\n"), 0o600))
	for _, tt := range []struct{ options, unused string }{
		{"-ksp_typ cg -pc_type jacobi", "-ksp_typ"},
		{"-options_file " + file, "-ksp_monitr"}, // the file's options, not -options_file
		{"-ksp_type cg -pc_type jacobi -pc_gamg_threshold 0.1 -ksp_rtol 1e-11", "-pc_gamg_threshold"},
		{"-ksp_type cg -pc_type jacobi -ksp_rtol 1e-11", ""},
	} {
		log.Reset()
		sv := must(op2.NewSolver(op2.SolverOptions{Package: "petsc", RTol: 1e-10, PETScOptions: tt.options}))
		for range 2 {
			check(t, s.x.Zero())
			if _, err := sv.Solve(s.A, s.x, s.b); err != nil {
				t.Fatalf("%s: %v", tt.options, err)
			}
		}
		check(t, sv.Close())
		got := log.String()
		switch {
		case tt.unused == "" && got != "":
			t.Errorf("%s: all used, but the log says %s", tt.options, got)
		case tt.unused != "" && (strings.Count(got, "did not use") != 1 || !strings.Contains(got, "options="+tt.unused+" ")):
			t.Errorf("%s: the log does not name %s once as unused: %s", tt.options, tt.unused, got)
		}
	}
}
