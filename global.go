package op2

import (
	"fmt"
	"unsafe"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// Global is a small array of dim values shared by all elements: read by
// kernels, or the target of a reduction (Inc, Min, Max).
type Global[T Scalar] struct {
	s    core.Storage // first field: device backends tie cleanups to &s
	data []T
	keep *engine.Keep // what checkpoints know of it apart from it
}

// NewGlobal declares a Global of dim values; data (len dim) gives the
// initial values and is copied; nil means zeros. dim may be at most
// MaxDim (and at most MaxReductionDim for a Global used in a reduction).
func NewGlobal[T Scalar](dim int, data []T, name string) (*Global[T], error) {
	if _, err := checkShape(fmt.Sprintf("global %q", name), "dim", 1, dim, scalarType[T]().Size()); err != nil {
		return nil, err
	}
	if data != nil && len(data) != dim {
		return nil, fmt.Errorf("op2: global %q: %d values given, want dim = %d", name, len(data), dim)
	}
	g := &Global[T]{}
	g.data = pinned[T](g, dim)
	copy(g.data, data)
	g.s = core.Storage{Name: name, Type: scalarType[T](), Dim: dim, Host: hostPtr(g.data), Len: dim, ID: core.NewID()}
	p := weak.Make(g)
	g.keep = &engine.Keep{What: fmt.Sprintf("global %q", name)}
	rt.proc.RegisterGlobal(func() *core.Storage {
		if g := p.Value(); g != nil {
			return &g.s
		}
		return nil
	}, g.keep)
	return g, nil
}

// Name is the global's name.
func (g *Global[T]) Name() string { return g.s.Name }

// Dim is the number of values.
func (g *Global[T]) Dim() int { return g.s.Dim }

// Data returns the values for reading and writing; after a reduction loop
// they hold the initial values combined with every contribution. The
// slice is the host copy itself: call Data again after issuing loops
// rather than keeping it, since what is written through a kept slice may
// reach loops issued before the write or not, depending on the backend
// and on whether loops are recorded (see Chain); SetValue keeps its
// place among recorded loops. It panics
// with the error DataErr would return: the failure of a recorded loop it
// runs first, or of the copy of the values from the device.
func (g *Global[T]) Data() []T { return orPanic(g.dataErr("Global.Data")) }

// DataErr is Data, returning as an error the failure of a recorded loop
// it runs first or of the copy from the device.
func (g *Global[T]) DataErr() ([]T, error) { return g.dataErr("Global.DataErr") }

// dataErr is DataErr for the API call named api.
func (g *Global[T]) dataErr(api string) ([]T, error) { return g.hostData(forStorage(&g.s), true, api) }

// hostData is the Global's values on the host under the lock of mode m,
// for the API call named api (forCollective: the calls a collective call
// makes itself, which run the recorded loops on every rank, as the call
// does); write says the caller changes them.
func (g *Global[T]) hostData(m engine.Mode, write bool, api string) ([]T, error) {
	forced := lock(m, api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := g.s.HostAccess(write); err != nil {
		return nil, apiError(err)
	}
	return g.data, nil
}

// DataRO returns a copy of the values, for reading. Changing the copy
// never changes the Global, on any backend (use Data to change values).
// Like Data, it panics with the error its Err form, DataROErr, would
// return.
func (g *Global[T]) DataRO() []T { return orPanic(g.dataROErr("Global.DataRO")) }

// DataROErr is DataRO, returning as an error the failure of a recorded
// loop it runs first or of the copy from the device.
func (g *Global[T]) DataROErr() ([]T, error) { return g.dataROErr("Global.DataROErr") }

// dataROErr is DataROErr for the API call named api.
func (g *Global[T]) dataROErr(api string) ([]T, error) {
	forced := lock(forStorage(&g.s), api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := g.s.HostAccess(false); err != nil {
		return nil, apiError(err)
	}
	return append([]T(nil), g.data...), nil
}

// Sync brings the host copy of the global's values up to date and returns
// an error if copying them from the device fails, instead of panicking as
// Data and DataRO do; see Dat.Sync.
func (g *Global[T]) Sync() error {
	forced := lock(forStorage(&g.s), "Global.Sync")
	defer unlock()
	if forced != nil {
		return forced
	}
	return syncHost(&g.s)
}

// State says where the global's current values are (see DataState).
func (g *Global[T]) State() DataState {
	lock(forStatus, "Global.State")
	defer unlock()
	return g.s.State
}

// Arg passes the Global with the given access (Read, Inc, Min or Max).
func (g *Global[T]) Arg(acc Access) Arg {
	a := Arg{e: engine.Arg{Core: core.Arg{Access: acc, Kind: core.ArgGlobal}}}
	if g != nil { // a nil Global is refused by the loop, naming the argument
		a.e.Core.Data = &g.s
	}
	return a
}

// Nbytes is the size in bytes of the global's values (PyOP2's
// Global.nbytes).
func (g *Global[T]) Nbytes() int { return g.s.Bytes() }

// Value returns the value of a Global of dim 1 (PyOP2's Global.value),
// after a reduction the initial value combined with every contribution.
// Like Data it panics with the error its Err form, ValueErr, would return
// (a recorded loop or the copy from the device failed); it also panics
// when the Global's dim is not 1, a programming error (use Data or DataRO
// for arrays).
func (g *Global[T]) Value() T {
	g.mustScalar("Value")
	return orPanic(g.valueErr("Global.Value"))
}

// ValueErr is Value, returning its failures as errors: a Global whose dim
// is not 1, the failure of a recorded loop it runs first, or of the copy
// from the device.
func (g *Global[T]) ValueErr() (T, error) { return g.valueErr("Global.ValueErr") }

// valueErr is ValueErr for the API call named api.
func (g *Global[T]) valueErr(api string) (T, error) {
	var zero T
	if err := g.scalar("Value"); err != nil {
		return zero, err
	}
	forced := lock(forStorage(&g.s), api)
	defer unlock()
	if forced != nil {
		return zero, forced
	}
	if err := g.s.HostAccess(false); err != nil {
		return zero, apiError(err)
	}
	return g.data[0], nil
}

// SetValue sets the value of a Global of dim 1; loops issued after it
// see the new value. It panics when the Global's dim is not 1, a
// programming error (use Data for arrays), and, like Data, with the error
// its Err form, SetValueErr, would return: the failure of a recorded loop
// it runs first, or of the copy of the values from the device.
//
// With loops recorded (see Chain), SetValue runs none of them: when none
// of them passes the Global, it sets the value at once (they cannot see
// it); otherwise the assignment is recorded after them and made when they
// run, in order, so that each loop sees the value of when it was issued.
// Resetting a reduction's Global between loops, as Airfoil resets its rms
// change, therefore leaves the loops recorded, to be fused or tiled.
func (g *Global[T]) SetValue(v T) {
	g.mustScalar("SetValue")
	orPanic(struct{}{}, g.setValueErr(v, "Global.SetValue"))
}

// SetValueErr is SetValue, returning its failures as errors: a Global
// whose dim is not 1, the failure of the recorded loops it runs (only
// where it cannot record the assignment), or of the copy from the device.
// On error the value is unchanged.
func (g *Global[T]) SetValueErr(v T) error { return g.setValueErr(v, "Global.SetValueErr") }

// setValueErr is SetValueErr for the API call named api.
func (g *Global[T]) setValueErr(v T, api string) error {
	if err := g.scalar("SetValue"); err != nil {
		return err
	}
	lock(forNoData, api)
	defer unlock()
	switch rt.proc.RecordGlobal(&g.s, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))) {
	case engine.AssignRecorded:
		return nil
	case engine.AssignForced:
		if err := rt.proc.Force(); err != nil {
			return err
		}
	}
	// The value replaces the Global's whole value: reductions into it
	// still on their way from a device are dropped, not waited for.
	if err := g.s.HostOverwrite(); err != nil {
		return apiError(err)
	}
	g.data[0] = v
	return nil
}

// scalar returns an error when the Global's dim is not 1: method (Value,
// SetValue) needs a single value.
func (g *Global[T]) scalar(method string) error {
	if g.s.Dim != 1 {
		return fmt.Errorf("op2: %s: %s needs dim 1 (use Data or DataRO for %d values)", g.s.Describe(), method, g.s.Dim)
	}
	return nil
}

// mustScalar panics when the Global's dim is not 1, a programming error.
func (g *Global[T]) mustScalar(method string) {
	if err := g.scalar(method); err != nil {
		panic(err.Error())
	}
}
