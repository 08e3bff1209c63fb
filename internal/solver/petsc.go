package solver

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/goop2/op2/internal/collective"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/petsc"
)

// StartMPI starts MPI for PETSc in a program not started by a launcher:
// a world of one (PETSc is built on MPI, which must start before PETSc
// does), its shim built into cacheDir, bounded by compileTimeout.
func StartMPI(cacheDir string, compileTimeout time.Duration) (*mpi.World, error) {
	w, err := mpi.Init(cacheDir, compileTimeout)
	if err != nil {
		return nil, fmt.Errorf("%w: PETSc runs on MPI, which cannot start: %v (%s)", petsc.ErrUnavailable, err, petsc.Install)
	}
	return w, nil
}

// StartPETSc initialises PETSc on w, unless it is, where loading it
// (since start) did not fail with loadErr, and logs it on logger (if
// not nil). Collective: a rank that cannot start PETSc says so to every
// rank, which would otherwise wait for it in PETSc's collectives, and
// every rank returns the error.
func StartPETSc(w *mpi.World, loadErr error, logger *slog.Logger, start time.Time) error {
	err := loadErr
	if !petsc.Initialized() {
		// PetscInitialize is collective: every rank's library first, the
		// same build everywhere (a rank without one, or with another
		// PetscInt, would leave the others waiting in PETSc).
		if err := samePETSc(w, loadErr); err != nil {
			return err
		}
		if err = petsc.Init(w); err == nil && logger != nil {
			version, path := petsc.Version()
			logger.LogAttrs(context.Background(), slog.LevelInfo, "op2: PETSc initialised", slog.Int("rank", w.Rank()),
				slog.String("version", version), slog.String("library", path), slog.Int("index_bytes", petsc.IntBytes()),
				slog.Float64("seconds", time.Since(start).Seconds()))
		}
	}
	return dist.AgreeStep(w, "starting PETSc", err)
}

// samePETSc is collective: the ranks agree on loading PETSc (loadErr,
// this rank's), and then that they loaded the same version with the same
// PetscInt, else every rank gets an error naming each rank's library.
func samePETSc(w *mpi.World, loadErr error) error {
	if err := dist.AgreeStep(w, "loading PETSc", loadErr); err != nil {
		return err
	}
	if w.Size() == 1 {
		return nil
	}
	// The build must be the same; the path may differ (one library, two
	// paths).
	version, path := petsc.Version()
	build := fmt.Sprintf("PETSc %s with %d-byte PetscInt", version, petsc.IntBytes())
	all, err := collective.Allgather(w, []byte(build+"\x00"+path))
	if err != nil {
		return fmt.Errorf("rank %d: loading PETSc: agreeing with the other ranks: %w", w.Rank(), err)
	}
	var each []string
	differ := false
	for r, b := range all {
		theirs, theirPath, _ := strings.Cut(string(b), "\x00")
		differ = differ || theirs != build
		each = append(each, fmt.Sprintf("rank %d: %s (%s)", r, theirs, theirPath))
	}
	if differ {
		return fmt.Errorf("%w: the ranks loaded different PETSc builds (every rank must load the same: set %s alike on every rank):\n  %s", petsc.ErrUnavailable, petsc.LibraryEnv, strings.Join(each, "\n  "))
	}
	return nil
}

// PETSc is a solver's PETSc side: its options prefix and, per matrix it
// solved with, PETSc's copy of the matrix and a KSP for it.
type PETSc struct {
	prefix  string
	options string // put under prefix; Close removes them
	// looked is set once the options no solve used were looked for,
	// after the first solve.
	looked bool
	// In the order they were made, the same on every rank (Close
	// destroys them in that order, collectively).
	systems []*System
}

// System is PETSc's copy of one matrix and a KSP for it.
type System struct {
	key any // the API's matrix
	A   *petsc.Mat
	ksp *petsc.KSP
}

// KSPOptions are how a PETSc solver's KSPs are set up (op2.SolverOptions,
// checked and defaulted).
type KSPOptions struct {
	Method, Precond     string
	RTol, ATol          float64
	MaxIts              int
	Norm                petsc.NormType
	InitialGuessNonzero bool
}

// String gives the options as messages name them.
func (o KSPOptions) String() string {
	return fmt.Sprintf("method %s, preconditioner %s, RTol %g, ATol %g, MaxIts %d, norm %v, InitialGuessNonzero %v",
		o.Method, o.Precond, o.RTol, o.ATol, o.MaxIts, o.Norm, o.InitialGuessNonzero)
}

// petscTypes maps the built-in solver's names onto PETSc's; other names
// are PETSc's own and pass through.
var petscTypes = map[string]string{"bicgstab": "bcgs"}

// NewPETSc puts options into PETSc's database under the prefix of the
// process's n-th PETSc solver; PETSc has started.
func NewPETSc(n int, options string) (*PETSc, error) {
	ps := &PETSc{prefix: fmt.Sprintf("op2_%d_", n), options: options}
	if options != "" {
		if err := petsc.SetOptions(ps.prefix, options); err != nil {
			return nil, err
		}
	}
	return ps, nil
}

// System returns the system made for key, or nil.
func (ps *PETSc) System(key any) *System {
	var sys *System
	for _, y := range ps.systems {
		if y.key == key {
			sys = y
		}
	}
	return sys
}

// Systems are the systems made, in order.
func (ps *PETSc) Systems() []*System { return ps.systems }

// NewSystem hands a square block pattern to PETSc (collectively) and
// makes a KSP for it, kept for key: rows of dim scalar rows, rowptr and
// colidx the local block pattern, gcol the global number of each local
// column element, rstart the global number of the first local row
// element and n the row elements in all.
func (ps *PETSc) NewSystem(key any, dim int, rowptr, colidx []int32, gcol []int64, rstart, n int64, o KSPOptions) (*System, error) {
	pm, err := petsc.NewMat(ps.prefix, dim, rowptr, colidx, gcol, rstart, n)
	if err != nil {
		return nil, err
	}
	method, precond := o.Method, o.Precond
	if t, ok := petscTypes[method]; ok {
		method = t
	}
	ksp, err := petsc.NewKSP(pm, n, petsc.KSPConfig{Prefix: ps.prefix, KSPType: method, PCType: precond,
		RTol: o.RTol, ATol: o.ATol, MaxIts: o.MaxIts, Norm: o.Norm, InitialGuessNonzero: o.InitialGuessNonzero})
	if err != nil {
		return nil, errors.Join(err, pm.Destroy())
	}
	sys := &System{key: key, A: pm, ksp: ksp}
	ps.systems = append(ps.systems, sys)
	return sys, nil
}

// Solve copies the matrix's block values vals into PETSc's copy and
// solves for x with right-hand side b (this rank's values). Collective.
func (s *System) Solve(vals, x, b []float64) (petsc.Result, error) {
	if err := s.A.SetValues(vals); err != nil {
		return petsc.Result{}, err
	}
	return s.ksp.Solve(x, b)
}

// drop destroys sys, made on this rank while another rank failed to
// make its own, and forgets it: every rank then makes it again at the
// next solve.
func (ps *PETSc) drop(sys *System) {
	sys.ksp.Destroy()
	sys.A.Destroy()
	ps.systems = slices.DeleteFunc(ps.systems, func(y *System) bool { return y == sys })
}

// Types are the KSP's and the PC's types, as PETSc's options left them.
func (s *System) Types() (method, precond string, err error) { return s.ksp.Types() }

// Close destroys the systems, in the order they were made, and removes
// the solver's options from PETSc's database (which holds 512 at most).
// Collective.
func (ps *PETSc) Close() error {
	var errs []error
	for _, sys := range ps.systems {
		errs = append(errs, sys.ksp.Destroy(), sys.A.Destroy())
	}
	ps.systems = nil
	if ps.options != "" && petsc.Initialized() {
		errs = append(errs, petsc.ClearOptions(ps.prefix, ps.options))
	}
	ps.options = ""
	return errors.Join(errs...)
}

// RowStart numbers n row elements on each rank contiguously over the
// ranks, as PETSc needs: rank p's are rstart_p + i, rstart_p the number
// the ranks before it own. It returns this rank's rstart and the number
// in all. Collective.
func RowStart(w *mpi.World, n int) (rstart, total int64, err error) {
	mine := binary.LittleEndian.AppendUint64(nil, uint64(n))
	all := make([]byte, 8*w.Size())
	if err := w.Allgather(mine, all); err != nil {
		return 0, 0, err
	}
	for r := 0; r < w.Size(); r++ {
		c := int64(binary.LittleEndian.Uint64(all[8*r:]))
		if r < w.Rank() {
			rstart += c
		}
		total += c
	}
	if total > 1<<31-1 {
		return 0, 0, fmt.Errorf("%d row elements in all do not fit GoOP2's 32-bit element numbers", total)
	}
	return rstart, total, nil
}

// Numbers returns the global numbers of a rank's total local row
// elements: n owned ones numbered from rstart, then the halo's, -1 until
// their owners send theirs.
func Numbers(rstart int64, n, total int) []int32 {
	nums := make([]int32, total)
	for i := range nums {
		nums[i] = -1
		if i < n {
			nums[i] = int32(rstart) + int32(i)
		}
	}
	return nums
}

// Columns returns the global number of each local column element, nums
// (from their owners), checking that every column of the pattern colidx
// received one.
func Columns(nums, colidx []int32) ([]int64, error) {
	gcol := make([]int64, len(nums))
	for c, g := range nums {
		gcol[c] = int64(g)
	}
	for k, c := range colidx {
		if gcol[c] < 0 {
			return nil, fmt.Errorf("internal error: column element %d (entry %d) received no global number from its owner", c, k)
		}
	}
	return gcol, nil
}
