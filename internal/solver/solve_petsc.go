package solver

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/petsc"
)

// PETScSolve is one solve with PETSc as the API hands it over, its
// arguments checked: the matrix A (its storage, block values and square
// block pattern), x and b (their storage and values), the process's use
// of PETSc and the API's lock.
type PETScSolve struct {
	Matrix string // A, in errors
	Key    any    // A, whose system the solver keeps
	Dim    int    // the rows' (and columns') dim
	// RowPtr and ColIdx are the block pattern of NRows owned row
	// elements and NCols local column elements (halo included).
	RowPtr, ColIdx []int32
	NRows, NCols   int
	Total          int // the row set's local elements, halo included
	Opts           KSPOptions
	// A, X and B are the storage of the matrix, x and b; Vals, XV and BV
	// their host values, read after the storage's HostAccess.
	A, X, B      *core.Storage
	Vals, XV, BV *[]float64
	Proc         *Process
	Launcher     func() (*mpi.World, error) // the launcher's MPI world (see Process.Start)
	Fatal        func(error) error          // ends the job when an MPI wait ran out of time
	Logger       *slog.Logger
	// Report logs a warning on the runtime's logger (standard error
	// without one).
	Report func(level slog.Level, msg string, attrs ...slog.Attr)
	Lock   func() error // takes the API's lock for a collective call
	Unlock func()
	// Exchange returns the first NCols of nums, a value per local row
	// element (halo included), after the halo's values came from their
	// owners. Collective.
	Exchange func(nums []int32) ([]int32, error)
}

// Solve solves A x = b with PETSc (ps, started in NewSolver), making
// PETSc's copy of A and a KSP for it the first time. Its errors say
// "Solve with PETSc" and the matrix; the API puts "op2: " before them.
// Collective.
func (ps *PETSc) Solve(c *PETScSolve) (Info, error) {
	// PETSc started in NewSolver; this finds its world (and that it has
	// not been finalised since).
	w, err := c.Proc.Start(c.Launcher, c.Fatal, c.Logger)
	if err != nil {
		return Info{}, fmt.Errorf("Solve with PETSc: %w", err)
	}
	// The ranks agree on the solver's settings (they make the system
	// collectively): ranks whose options differ get an error naming each
	// rank's rather than waiting in PETSc for ever.
	what := fmt.Sprintf("PETSc solve (%v; options %q)", c.Opts, ps.options)
	sys := ps.System(c.Key)
	var setup time.Duration
	if sys == nil {
		if err := sameSettings(w, what); err != nil {
			return Info{}, fmt.Errorf("Solve with PETSc (%s): %w", c.Matrix, c.Fatal(err))
		}
		start := time.Now()
		sys, err = ps.newSystem(w, c)
		// A rank that could not make it says so to every rank.
		if err = dist.AgreeStep(w, "PETSc solve: making the system", err); err != nil {
			if sys != nil {
				ps.drop(sys)
			}
			return Info{}, fmt.Errorf("Solve with PETSc (%s): %w", c.Matrix, c.Fatal(err))
		}
		setup = time.Since(start)
	}

	n := c.NRows * c.Dim
	var res petsc.Result
	err = func() error {
		err := c.Lock()
		defer c.Unlock() // a panic on the way must not leave the lock held
		if err == nil {
			err = c.A.HostAccess(false)
		}
		if err == nil {
			err = c.B.HostAccess(false)
		}
		if err == nil && c.Opts.InitialGuessNonzero {
			err = c.X.HostAccess(true)
		} else if err == nil {
			c.X.WriteOnly() // PETSc starts from zero: x's values are not read
		}
		if err == nil {
			dist.HostWrite(c.X)
		}
		// Whatever failed here fails on this rank alone: agreed before
		// any collective.
		err = dist.AgreeStep(w, what, err)
		if err == nil {
			res, err = sys.Solve(*c.Vals, (*c.XV)[:n], (*c.BV)[:n])
		}
		return err
	}()
	if err != nil {
		return Info{}, fmt.Errorf("Solve with PETSc (%s): %w", c.Matrix, c.Fatal(err))
	}
	info := Info{Iterations: res.Iterations, Residual: res.Residual, Norm: res.Norm, Converged: res.Reason > 0,
		Reason: res.ReasonName, Setup: setup}
	if info.Method, info.Precond, err = sys.Types(); err != nil {
		return info, fmt.Errorf("Solve with PETSc (%s): %w", c.Matrix, err)
	}
	ps.reportUnused(c.Report)
	if res.Reason < 0 && res.ReasonName != "DIVERGED_ITS" {
		return info, fmt.Errorf("Solve with PETSc (%s/%s) on %s: %s after %d iterations (residual %g)",
			info.Method, info.Precond, c.Matrix, res.ReasonName, res.Iterations, res.Residual)
	}
	return info, nil
}

// reportUnused warns, after the solver's first solve, of its options
// that no PETSc object looked up: misspelt names (-ksp_typ), or options
// for objects the solve did not have, which PETSc itself passes over in
// silence.
func (ps *PETSc) reportUnused(report func(slog.Level, string, ...slog.Attr)) {
	if ps.looked || ps.options == "" {
		return
	}
	ps.looked = true
	unused, err := petsc.UnusedOptions(ps.prefix)
	if err != nil {
		report(slog.LevelWarn, "op2: Solver: PETSc could not say which options the solve used", slog.String("error", err.Error()))
	} else if len(unused) > 0 {
		report(slog.LevelWarn, "op2: Solver: PETSc options the first solve did not use: misspelt, or for objects the solve does not have",
			slog.String("options", strings.Join(unused, " ")), slog.String("all", ps.options),
			slog.String("hint", "PETSc's manual pages list each object's options; PETSC_OPTIONS=-help prints those the solver reads"))
	}
}

// sameSettings returns an error naming every rank's settings (this
// rank's: mine) unless they are the same on every rank. Collective.
func sameSettings(w *mpi.World, mine string) error {
	if w.Size() == 1 {
		return nil
	}
	all, err := dist.Allgather(w, []byte(mine))
	if err != nil {
		return err
	}
	var lines []string
	differ := false
	for r, s := range all {
		lines = append(lines, fmt.Sprintf("rank %d: %s", r, s))
		differ = differ || string(s) != mine
	}
	if !differ {
		return nil
	}
	return fmt.Errorf("the ranks' PETSc solvers differ (every rank makes its Solver with the same options):\n  %s", strings.Join(lines, "\n  "))
}

// newSystem hands A's pattern to PETSc (collectively) and makes a KSP
// for it.
func (ps *PETSc) newSystem(w *mpi.World, c *PETScSolve) (*System, error) {
	rstart, N, gcol, err := globalColumns(w, c)
	if err != nil {
		return nil, err
	}
	return ps.NewSystem(c.Key, c.Dim, c.RowPtr, c.ColIdx, gcol, rstart, N, c.Opts)
}

// globalColumns numbers the rows of a square pattern contiguously over
// the ranks, as PETSc needs: rank p's owned row elements are rstart_p +
// i, rstart_p the number of elements the ranks before it own; it returns
// this rank's rstart, the number of row elements in all, and the global
// number of each local column element (owned, then halo: their owners'
// numbers, through c.Exchange). Collective.
func globalColumns(w *mpi.World, c *PETScSolve) (rstart, total int64, gcol []int64, err error) {
	n := c.NRows
	if w.Size() == 1 {
		gcol = make([]int64, c.NCols)
		for i := range gcol {
			gcol[i] = int64(i)
		}
		return 0, int64(n), gcol, nil
	}
	if rstart, total, err = RowStart(w, n); err != nil {
		return 0, 0, nil, c.Fatal(err)
	}
	nums, err := c.Exchange(Numbers(rstart, n, c.Total))
	if err != nil {
		return 0, 0, nil, err
	}
	if gcol, err = Columns(nums, c.ColIdx); err != nil {
		return 0, 0, nil, err
	}
	return rstart, total, gcol, nil
}
