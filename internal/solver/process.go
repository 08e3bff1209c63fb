package solver

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/petsc"
)

// Process is a process's use of PETSc: the MPI world it runs on when
// GoOP2 started MPI for it (a program not started by a launcher), and
// the number of PETSc solvers made, for their option prefixes. The zero
// value is ready to use.
type Process struct {
	// Settings returns the cache directory and the compilers' timeout
	// MPI is started with for PETSc alone (the program's configuration:
	// engine.Process.MPISettings).
	Settings func() (cacheDir string, compileTimeout time.Duration, err error)

	mu      sync.Mutex
	own     *mpi.World // MPI started for PETSc alone (a world of one), or nil
	solvers int
}

// World returns the MPI world PETSc runs on: the launcher's (what
// launcher returns) or, in a program not started by one, a world of one
// started for it (PETSc is built on MPI, which must start before PETSc
// does).
func (p *Process) World(launcher func() (*mpi.World, error)) (*mpi.World, error) {
	w, err := launcher()
	if err != nil || w != nil {
		return w, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.own != nil {
		return p.own, nil
	}
	dir, timeout, err := p.Settings()
	if err != nil {
		return nil, err
	}
	if w, err = StartMPI(dir, timeout); err != nil {
		return nil, err
	}
	p.own = w
	return w, nil
}

// Finalize ends PETSc, if it started, and the MPI started for it; the
// launcher's MPI is the caller's to end.
func (p *Process) Finalize() error {
	err := petsc.Finalize()
	p.mu.Lock()
	defer p.mu.Unlock()
	if w := p.own; w != nil {
		err = errors.Join(err, w.Finalize())
	}
	return err
}

// Start loads PETSc and initialises it, once per process, on the
// launcher's MPI or on a world of one started for it, and returns that
// world; fatal is applied to the outcome of the start (ending the job
// when an MPI wait ran out of time), and logger (if not nil) logs it.
// Collective: every rank agrees on the outcome.
func (p *Process) Start(launcher func() (*mpi.World, error), fatal func(error) error, logger *slog.Logger) (*mpi.World, error) {
	// The launcher's world (nil without one), then the library: without
	// it, a program not started by a launcher need not start MPI to
	// learn that it cannot solve.
	start := time.Now()
	w, werr := launcher()
	if w != nil && w.Finalized() {
		// Loading PETSc calls MPI, which would abort the job.
		return nil, fmt.Errorf("rank %d: starting PETSc: %w", w.Rank(), mpi.ErrFinalized)
	}
	err := petsc.Load()
	if werr == nil && w == nil && err == nil {
		w, werr = p.World(launcher)
	}
	if werr != nil {
		return nil, werr
	}
	if w == nil {
		return nil, err
	}
	if err := fatal(StartPETSc(w, err, logger, start)); err != nil {
		return nil, err
	}
	return w, nil
}

// NewSolver starts PETSc (collectively, see Start), if no solver did,
// and puts options into its database under a new solver's prefix.
func (p *Process) NewSolver(launcher func() (*mpi.World, error), fatal func(error) error, logger *slog.Logger, options string) (*PETSc, error) {
	if _, err := p.Start(launcher, fatal, logger); err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.solvers++
	n := p.solvers
	p.mu.Unlock()
	return NewPETSc(n, options)
}
