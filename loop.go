package op2

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
	"github.com/goop2/op2/internal/exec"
)

// LoopError reports misuse of the API found before a loop runs.
type LoopError struct {
	Kernel string // kernel name
	Set    string // iteration set name
	Arg    int    // argument position (0-based), or -1 when not about one argument
	Msg    string
}

func (e *LoopError) Error() string {
	if e.Arg < 0 {
		return fmt.Sprintf("op2: loop %q over set %q: %s", e.Kernel, e.Set, e.Msg)
	}
	return fmt.Sprintf("op2: loop %q over set %q: argument %d: %s", e.Kernel, e.Set, e.Arg, e.Msg)
}

// IterationSet is what a loop runs over: a *Set (all its elements), a
// *Subset (some of them), an *ExtrudedSet (each column's layers) or, for
// ParLoop, a *MixedSet (each block's set in turn). Only this package's
// types implement it.
type IterationSet interface {
	// Name names the iteration set in messages.
	Name() string
	// Size is the number of elements a loop over it runs the kernel for
	// (without MPI).
	Size() int
	iteration() (*Set, *Subset)
}

func (s *Set) iteration() (*Set, *Subset) { return s, nil }

// bindOver binds a loop over a set or a subset (see bind).
func bindOver(r *Runtime, backend string, l *core.Loop, k *Kernel, over IterationSet, args []Arg) error {
	var set *Set
	var sub *Subset
	if ms, ok := over.(*MixedSet); ok && ms != nil {
		name := "<nil>"
		if k != nil {
			name = k.c.Name
		}
		return &LoopError{Kernel: name, Set: ms.name, Arg: -1, Msg: "a loop over a mixed set runs as one loop per block, which ParLoop runs; for a Loop object or its source take each block's set (MixedSet.Block)"}
	}
	x, extruded := over.(*ExtrudedSet)
	if extruded {
		if x != nil {
			set = x.base
		}
	} else if over != nil {
		set, sub = over.iteration()
	}
	if set != nil && hasMixed(args) {
		// The expanded list is never args itself, so args does not
		// escape into r: a plain loop's arguments stay on the stack.
		flat, err := expandMixed(k, set.c.Name, args, nil, -1, r.mixedArgs)
		if err == nil {
			err = blockError(bind(r, backend, l, k, set, x, flat), flat)
		}
		clear(flat) // keep no data alive
		r.mixedArgs = flat[:0]
		if err != nil {
			return err
		}
	} else if err := bind(r, backend, l, k, set, x, args); err != nil {
		return blockError(err, args) // a block's loop of a loop over a mixed set
	}
	r.e.CheckLocality(l)
	if sub != nil {
		sub.restrict(l)
	}
	return nil
}

// hasMixed says whether any of args is a mixed argument.
func hasMixed(args []Arg) bool {
	for i := range args {
		if args[i].e.Mixed != nil {
			return true
		}
	}
	return false
}

// engineArgs is args as the engine's arguments: the same memory, so
// that a loop's arguments are neither copied nor moved off the caller's
// stack. The safe forms tried cost an allocation per loop: handing the
// engine a closure that returns &args[i].e makes args escape (escape
// analysis ties the closure's result to the engine's use of each
// argument, whose contents leak), and so does a generic engine function
// given an accessor function (its argument escapes through the call).
func engineArgs(args []Arg) []engine.Arg {
	return unsafe.Slice((*engine.Arg)(unsafe.Pointer(unsafe.SliceData(args))), len(args))
}

// Arg and engine.Arg have one size (and Arg's one field is at offset 0),
// which engineArgs needs: either array length is negative otherwise.
var (
	_ [unsafe.Sizeof(Arg{}) - unsafe.Sizeof(engine.Arg{})]byte
	_ [unsafe.Sizeof(engine.Arg{}) - unsafe.Sizeof(Arg{})]byte
)

// bind validates a loop's pieces for the named backend and fills l with
// them (engine.Process.Bind). Nothing is changed anywhere else, so a
// rejected loop leaves every object as it was.
//
// x is the extruded set of a loop over one (set is then its base set),
// nil otherwise.
func bind(r *Runtime, backend string, l *core.Loop, k *Kernel, set *Set, x *ExtrudedSet, args []Arg) error {
	if k == nil {
		return &LoopError{Kernel: "<nil>", Set: "?", Arg: -1, Msg: "kernel is nil"}
	}
	if set == nil {
		return &LoopError{Kernel: k.c.Name, Set: "<nil>", Arg: -1, Msg: "iteration set is nil"}
	}
	info, err := k.parse()
	if err != nil {
		return err
	}
	b := engine.Binding{Backend: backend, Kernel: &k.c.Kernel, Info: info, Set: &set.c, Consts: k.usedConsts(r.consts)}
	if x != nil {
		b.Extruded = &x.x
	}
	return r.proc.Bind(&b, engineArgs(args), l)
}

// ParLoop runs kernel k once for every element of set, with the given
// arguments, on the configured backend. set is a *Set, a *Subset to run
// the kernel for some of a set's elements only (see Subset), an
// *ExtrudedSet or a *MixedSet (see IterationSet). The arguments are checked first;
// on any error nothing runs and no data changes.
//
// The first loop of each signature generates and compiles code; later ones
// with the same kernel and argument shapes reuse it, whatever data they pass.
//
// One Dat may be passed in several arguments only where the result cannot
// depend on the backend:
//
//   - any number of reads (READ), directly and through any maps;
//   - any number of increments (INC) through maps (any maps, any columns,
//     ArgMap and ArgVec alike), as Airfoil's res_calc increments res through
//     both columns of pecell; or any number of direct increments;
//   - any number of MIN arguments through maps, or any number of MAX
//     arguments through maps (never two of INC, MIN and MAX together);
//   - any number of WRITE or RW arguments through the same column of one
//     map (ArgMap with the same map and index), or any number of WRITE or
//     RW arguments through the whole of one map (ArgVec with the same map).
//
// Every other combination is refused with a *LoopError naming both
// arguments: a read together with a modification (whether the read sees
// other elements' updates differs between backends), a direct access
// together with a modification through a map or the other way round,
// increments mixed with WRITE or RW, WRITE or RW through two different
// maps, through two different columns of one map, or through one column
// and the whole map (different columns of different elements may reach
// the same element, and which write lands last would depend on the order
// the backend runs the elements in), and WRITE or RW passed directly
// twice. A disabled optional argument (Opt) conflicts with nothing, and
// index arguments (ArgIdx, Map.ArgIdx) only read. A Global may be passed any
// number of times for reading and for one kind of reduction (INC, MIN or
// MAX); its READ arguments see the value from before the loop. Mixing two
// kinds of reduction on one Global is refused. Views of single components
// of a Dat (Dat.View) follow these rules per component; views of
// different components never conflict, and a view and the whole Dat
// conflict unless both only read (see DatView).
func ParLoop(k *Kernel, set IterationSet, args ...Arg) error { return rt.ParLoop(k, set, args...) }

// ParLoop runs a loop in runtime r (see the package-level ParLoop).
func (r *Runtime) ParLoop(k *Kernel, set IterationSet, args ...Arg) error {
	lock(forNoData, "Runtime.ParLoop")
	defer unlock()
	if r.e.Recording() && !runsAtOnce(r.e, k) {
		return r.record(k, set, args)
	}
	if ms, ok := set.(*MixedSet); ok && ms != nil {
		return r.parLoopMixed(k, ms, args)
	}
	l := &r.e.Loop
	defer forget(l)
	if err := bindOver(r, r.e.Cfg.Backend, l, k, set, args); err != nil {
		return err
	}
	l.Check = r.e.Cfg.Check
	b, err := r.e.CurrentBackend()
	if err != nil {
		return err
	}
	return runNow(r.e, b, l)
}

// forget empties the runtime's reused loop l once it has run, keeping
// only its argument list's capacity: it would otherwise keep the loop's
// set, Dats and Globals alive until later loops overwrite them (the
// arguments beyond a shorter loop's, never), so that a mesh the program
// dropped stayed in memory and in its checkpoints.
func forget(l *core.Loop) {
	args := l.Args
	clear(args[:cap(args)])
	*l = core.Loop{Args: args[:0]}
}

// runNow runs loop l at once in r, through the automatic checkpoints
// (engine.Runtime.RunNow). Caller holds the lock.
func runNow(r *engine.Runtime, b *exec.Opened, l *core.Loop) error { return r.RunNow(b, l) }

// Generate returns the source that backend would compile for a loop of k
// over set with args, without running anything and without opening the
// backend: no C compiler, OpenCL library or device is needed (static
// generation). The loop is checked as ParLoop checks it. Device backends
// generate for a nominal device (opencl: 32 KiB of local memory), so a
// device whose limits matter to the loop may compile different source.
func Generate(backend string, k *Kernel, set IterationSet, args ...Arg) (string, error) {
	return rt.Generate(backend, k, set, args...)
}

// Generate returns backend's source for a loop in runtime r (see the
// package-level Generate).
func (r *Runtime) Generate(backend string, k *Kernel, set IterationSet, args ...Arg) (string, error) {
	lock(forNoData, "Runtime.Generate")
	defer unlock()
	var l core.Loop
	if err := bindOver(r, backend, &l, k, set, args); err != nil {
		return "", err
	}
	l.Check = r.e.Cfg.Check
	return r.e.Source(backend, nil, &l)
}

// Loop is a parallel loop as an object (PyOP2's backend API): Generate
// returns the code the backend produces for it, without running anything,
// and Compute runs it. The backend is the one configured when the loop was
// made, in the runtime that made it.
type Loop struct {
	l       core.Loop
	kernel  *Kernel
	rt      *Runtime
	name    string       // the backend's name
	backend *exec.Opened // nil when the backend cannot be opened here
	openErr error        // why, then
}

// NewLoop checks the arguments and records the loop without running it.
// A loop can be made, and its source generated, for a backend that cannot
// run on this machine (no OpenCL library or device); Compute then returns
// that error (matching ErrBackendUnavailable).
func NewLoop(k *Kernel, set IterationSet, args ...Arg) (*Loop, error) {
	return rt.NewLoop(k, set, args...)
}

// NewLoop records a loop of runtime r (see the package-level NewLoop).
func (r *Runtime) NewLoop(k *Kernel, set IterationSet, args ...Arg) (*Loop, error) {
	lp := &Loop{kernel: k, rt: r}
	lock(forNoData, "Runtime.NewLoop")
	defer unlock()
	if err := bindOver(r, r.e.Cfg.Backend, &lp.l, k, set, args); err != nil {
		return nil, err
	}
	engine.MarkLooped(&lp.l) // the loop holds the sets' current numbering
	lp.l.Check = r.e.Cfg.Check
	lp.name = r.e.Cfg.Backend
	b, err := r.e.CurrentBackend()
	switch {
	case err != nil && errors.Is(err, ErrBackendUnavailable) && r.e.Err == nil:
		lp.openErr = err
	case err != nil:
		return nil, err
	}
	lp.backend = b
	return lp, nil
}

// Backend is the name of the backend the loop runs on.
func (lp *Loop) Backend() string { return lp.name }

// Generate returns the complete source the backend compiles for this loop.
// A loop whose program is already built returns that program's source; a
// loop whose backend cannot be opened here gets the backend's static
// generation (see the package-level Generate).
func (lp *Loop) Generate() (string, error) {
	lock(forNoData, "Loop.Generate")
	defer unlock()
	lp.l.Consts = lp.kernel.usedConsts(lp.rt.consts)
	return lp.rt.e.Source(lp.name, lp.backend, &lp.l)
}

// Compute runs the loop, compiling it first if needed.
//
// In a chain or in lazy mode (see Chain), Compute records the loop, as
// ParLoop does.
func (lp *Loop) Compute() error {
	lock(forNoData, "Loop.Compute")
	defer unlock()
	if lp.backend == nil {
		return lp.openErr
	}
	lp.l.Consts = lp.kernel.usedConsts(lp.rt.consts)
	if r := lp.rt.e; r.Recording() && !runsAtOnce(r, lp.kernel) {
		if err := r.RecordCopy(&lp.l, lp.backend); err != nil {
			return err
		}
		return lp.rt.e.AutoRecorded(&lp.kernel.c.Kernel)
	}
	return runNow(lp.rt.e, lp.backend, &lp.l)
}
