package op2

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/exec"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/petsc"
)

// ErrPETScUnavailable is matched (errors.Is) by the errors Solve returns
// when a solver with Package "petsc" cannot load or start PETSc; their
// message says what to install.
var ErrPETScUnavailable = petsc.ErrUnavailable

// petscWorld returns the MPI world PETSc runs on: the launcher's or,
// in a program not started by one, a world of one started for it
// (PETSc is built on MPI, which must start before PETSc does).
func petscWorld() (*mpi.World, error) {
	w, err := mpiWorld()
	if err != nil || w != nil {
		return w, err
	}
	rt.proc.petscState.Lock()
	defer rt.proc.petscState.Unlock()
	if rt.proc.petscState.own != nil {
		return rt.proc.petscState.own, nil
	}
	cfg, err := exec.ConfigFromEnv()
	if err != nil {
		return nil, err
	}
	if w, err = mpi.Init(cfg.CacheDir); err != nil {
		return nil, fmt.Errorf("%w: PETSc runs on MPI, which cannot start: %v (%s)", petsc.ErrUnavailable, err, petsc.Install)
	}
	rt.proc.petscState.own = w
	return w, nil
}

// finalizePETSc ends PETSc, if it started, and the MPI started for it;
// the launcher's MPI is Finalize's to end.
func finalizePETSc() error {
	err := petsc.Finalize()
	rt.proc.petscState.Lock()
	defer rt.proc.petscState.Unlock()
	if w := rt.proc.petscState.own; w != nil {
		err = errors.Join(err, w.Finalize())
	}
	return err
}

// petscSolver is a Solver's PETSc side: its options prefix and, per
// matrix it solved with, PETSc's copy of the matrix and a KSP for it.
type petscSolver struct {
	prefix string
	// In the order they were made, the same on every rank (Close
	// destroys them in that order, collectively).
	systems []*petscSystem
}

// newPETScSolver starts PETSc (collectively), if no solver did, and
// puts options into its database under a new solver's prefix.
func newPETScSolver(options string) (*petscSolver, error) {
	if _, err := startPETSc(); err != nil {
		return nil, err
	}
	rt.proc.petscState.Lock()
	rt.proc.petscState.solvers++
	ps := &petscSolver{prefix: fmt.Sprintf("op2_%d_", rt.proc.petscState.solvers)}
	rt.proc.petscState.Unlock()
	if options != "" {
		if err := petsc.SetOptions(ps.prefix, options); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// startPETSc loads PETSc and initialises it, once per process, on the
// launcher's MPI or on a world of one started for it, and returns that
// world. Collective: every rank agrees on the outcome.
func startPETSc() (*mpi.World, error) {
	// The library first: without it, a program not started by a
	// launcher need not start MPI to learn that it cannot solve.
	start := time.Now()
	err := petsc.Load()
	w, werr := mpiWorld()
	if werr == nil && w == nil && err == nil {
		w, werr = petscWorld()
	}
	if werr != nil {
		return nil, werr
	}
	if w == nil {
		return nil, err
	}
	if err == nil && !petsc.Initialized() {
		if err = petsc.Init(w); err == nil {
			if l := rt.e.Logger(); l != nil {
				version, path := petsc.Version()
				l.LogAttrs(context.Background(), slog.LevelInfo, "op2: PETSc initialised", slog.Int("rank", w.Rank()),
					slog.String("version", version), slog.String("library", path), slog.Int("index_bytes", petsc.IntBytes()),
					slog.Float64("seconds", time.Since(start).Seconds()))
			}
		}
	}
	// A rank that cannot start PETSc says so to every rank, which would
	// otherwise wait for it in PETSc's collectives.
	if err := mpiFatal(dist.AgreeStep(w, "starting PETSc", err)); err != nil {
		return nil, err
	}
	return w, nil
}

type petscSystem struct {
	mat *Mat[float64] // GoOP2's matrix
	A   *petsc.Mat    // PETSc's copy
	ksp *petsc.KSP
}

// petscTypes maps the built-in solver's names onto PETSc's; other names
// are PETSc's own and pass through.
var petscTypes = map[string]string{"bicgstab": "bcgs"}

// solvePETSc is Solve with Package "petsc".
func (s *Solver) solvePETSc(A *Mat[float64], x, b *Dat[float64]) (SolveInfo, error) {
	// PETSc started in NewSolver; this finds its world (and that it has
	// not been finalised since).
	w, err := startPETSc()
	if err != nil {
		return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc: %w", err)
	}
	ps := s.petsc
	var sys *petscSystem
	for _, y := range ps.systems {
		if y.mat == A {
			sys = y
		}
	}
	var setup time.Duration
	if sys == nil {
		start := time.Now()
		if sys, err = s.newPETScSystem(w, A); err != nil {
			return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, err)
		}
		ps.systems = append(ps.systems, sys)
		setup = time.Since(start)
	}

	sp := A.sp
	n := sp.pat.NRows * sp.rdim
	err = lock(forCollective)
	if err == nil {
		err = A.s.HostAccess(false)
	}
	if err == nil {
		err = b.s.HostAccess(false)
	}
	if err == nil && s.opts.InitialGuessNonzero {
		err = x.s.HostAccess(true)
	} else if err == nil {
		x.s.WriteOnly() // PETSc starts from zero: x's values are not read
	}
	if err == nil {
		dist.HostWrite(&x.s)
	}
	// Whatever failed here fails on this rank alone: agreed before any
	// collective.
	err = dist.AgreeStep(w, "PETSc solve", err)
	var res petsc.Result
	if err == nil {
		if err = sys.A.SetValues(A.data); err == nil {
			res, err = sys.ksp.Solve(x.data[:n], b.data[:n])
		}
	}
	unlock()
	if err != nil {
		return SolveInfo{}, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, mpiFatal(err))
	}
	info := SolveInfo{Iterations: res.Iterations, Residual: res.Residual, Norm: NormType(res.Norm), Converged: res.Reason > 0,
		Reason: res.ReasonName, Setup: setup}
	if info.Method, info.Precond, err = sys.ksp.Types(); err != nil {
		return info, fmt.Errorf("op2: Solve with PETSc (%s): %w", A.s.Matrix, err)
	}
	if res.Reason < 0 && res.ReasonName != "DIVERGED_ITS" {
		return info, fmt.Errorf("op2: Solve with PETSc (%s/%s) on %s: %s after %d iterations (residual %g)",
			info.Method, info.Precond, A.s.Matrix, res.ReasonName, res.Iterations, res.Residual)
	}
	return info, nil
}

// newPETScSystem hands A's pattern to PETSc (collectively) and makes a
// KSP for it.
func (s *Solver) newPETScSystem(w *mpi.World, A *Mat[float64]) (*petscSystem, error) {
	rstart, N, gcol, err := A.sp.globalColumns(w)
	if err != nil {
		return nil, err
	}
	sp := A.sp
	pm, err := petsc.NewMat(s.petsc.prefix, sp.rdim, sp.pat.RowPtr, sp.pat.ColIdx, gcol, rstart, N)
	if err != nil {
		return nil, err
	}
	o := s.opts
	method, precond := o.Method, o.Precond
	if t, ok := petscTypes[method]; ok {
		method = t
	}
	ksp, err := petsc.NewKSP(pm, N, petsc.KSPConfig{Prefix: s.petsc.prefix, KSPType: method, PCType: precond,
		RTol: o.RTol, ATol: o.ATol, MaxIts: o.MaxIts, Norm: petsc.NormType(o.Norm), InitialGuessNonzero: o.InitialGuessNonzero})
	if err != nil {
		return nil, errors.Join(err, pm.Destroy())
	}
	return &petscSystem{mat: A, A: pm, ksp: ksp}, nil
}

// globalColumns numbers the rows of a square sparsity contiguously over
// the ranks, as PETSc needs: rank p's owned row elements are rstart_p +
// i, rstart_p the number of elements the ranks before it own; it returns
// this rank's rstart, the number of row elements in all, and the global
// number of each local column element (owned, then halo: their owners'
// numbers, through a halo exchange). Collective.
func (sp *Sparsity) globalColumns(w *mpi.World) (rstart, total int64, gcol []int64, err error) {
	n := sp.pat.NRows
	gcol = make([]int64, sp.pat.NCols)
	if w.Size() == 1 {
		for i := range gcol {
			gcol[i] = int64(i)
		}
		return 0, int64(n), gcol, nil
	}
	mine := binary.LittleEndian.AppendUint64(nil, uint64(n))
	all := make([]byte, 8*w.Size())
	if err := w.Allgather(mine, all); err != nil {
		return 0, 0, nil, mpiFatal(err)
	}
	for r := 0; r < w.Size(); r++ {
		c := int64(binary.LittleEndian.Uint64(all[8*r:]))
		if r < w.Rank() {
			rstart += c
		}
		total += c
	}
	if total > 1<<31-1 {
		return 0, 0, nil, fmt.Errorf("%d row elements in all do not fit GoOP2's 32-bit element numbers", total)
	}
	nums := make([]int32, sp.rows.c.Total)
	for i := range nums {
		nums[i] = -1
		if i < n {
			nums[i] = int32(rstart) + int32(i)
		}
	}
	g, err := NewDat(sp.rows, 1, nums, fmt.Sprintf("global numbers of %q", sp.rows.c.Name))
	if err != nil {
		return 0, 0, nil, err
	}
	// A loop reading g through the columns' map brings the whole halo
	// (exec and non-exec) from the owners, as Mat.Mult's does for x.
	col := sp.pairs[0].Col
	if err := ParLoop(rt.proc.matHalo, setOf(col.c.From), g.ArgMap(Read, col, 0)); err != nil {
		return 0, 0, nil, err
	}
	err = lock(forCollective)
	if err == nil {
		err = g.s.HostAccess(false)
	}
	if err == nil {
		for c := range gcol {
			gcol[c] = int64(g.data[c])
		}
	}
	unlock()
	if err != nil {
		return 0, 0, nil, err
	}
	for k, c := range sp.pat.ColIdx {
		if gcol[c] < 0 {
			return 0, 0, nil, fmt.Errorf("internal error: column element %d (entry %d) received no global number from its owner", c, k)
		}
	}
	return rstart, total, gcol, nil
}

// Close frees what the solver holds outside Go: with Package "petsc",
// PETSc's copies of the matrices it solved with and its KSPs. In a
// distributed run it is collective, like Solve. The solver must not be
// used afterwards. A solver that is not closed keeps them until the
// program ends; after Finalize, Close has nothing left to free.
func (s *Solver) Close() error {
	if s.petsc == nil || len(s.petsc.systems) == 0 {
		return nil
	}
	var errs []error
	for _, sys := range s.petsc.systems {
		errs = append(errs, sys.ksp.Destroy(), sys.A.Destroy())
	}
	s.petsc.systems = nil
	return errors.Join(errs...)
}
