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
	rt.proc.RegisterGlobal(func() *core.Storage {
		if g := p.Value(); g != nil {
			return &g.s
		}
		return nil
	})
	return g, nil
}

// Name is the global's name.
func (g *Global[T]) Name() string { return g.s.Name }

// Dim is the number of values.
func (g *Global[T]) Dim() int { return g.s.Dim }

// Data returns the values for reading and writing; after a reduction loop
// they hold the initial values combined with every contribution. It panics
// if copying the values from the device fails; see Sync.
func (g *Global[T]) Data() []T {
	forced := lock(forStorage(&g.s))
	defer unlock()
	mustForce(forced)
	mustHost(g.s.HostAccess(true))
	return g.data
}

// DataRO returns a copy of the values, for reading. Changing the copy
// never changes the Global, on any backend (use Data to change values).
// It panics if copying the values from the device fails; see Sync.
func (g *Global[T]) DataRO() []T {
	forced := lock(forStorage(&g.s))
	defer unlock()
	mustForce(forced)
	mustHost(g.s.HostAccess(false))
	return append([]T(nil), g.data...)
}

// Sync brings the host copy of the global's values up to date and returns
// an error if copying them from the device fails, instead of panicking as
// Data and DataRO do; see Dat.Sync.
func (g *Global[T]) Sync() error {
	forced := lock(forStorage(&g.s))
	defer unlock()
	if forced != nil {
		return forced
	}
	return syncHost(&g.s)
}

// State says where the global's current values are (see DataState).
func (g *Global[T]) State() DataState {
	lock(forStatus)
	defer unlock()
	return g.s.State
}

// Arg passes the Global with the given access (Read, Inc, Min or Max).
func (g *Global[T]) Arg(acc Access) Arg {
	return Arg{e: engine.Arg{Core: core.Arg{Data: &g.s, Access: acc, Kind: core.ArgGlobal}}}
}

// Nbytes is the size in bytes of the global's values (PyOP2's
// Global.nbytes).
func (g *Global[T]) Nbytes() int { return g.s.Bytes() }

// Value returns the value of a Global of dim 1 (PyOP2's Global.value),
// after a reduction the initial value combined with every contribution.
// Like Data it panics if copying the value from the device fails (see
// Sync); it also panics when the Global's dim is not 1, a programming
// error (use Data or DataRO for arrays).
func (g *Global[T]) Value() T {
	g.mustScalar("Value")
	forced := lock(forStorage(&g.s))
	defer unlock()
	mustForce(forced)
	mustHost(g.s.HostAccess(false))
	return g.data[0]
}

// SetValue sets the value of a Global of dim 1; loops issued after it
// see the new value. It panics when the Global's dim is not 1, a
// programming error (use Data for arrays), or, like Data, if copying the
// values from the device fails.
//
// With loops recorded (see Chain), SetValue runs none of them: when none
// of them passes the Global, it sets the value at once (they cannot see
// it); otherwise the assignment is recorded after them and made when they
// run, in order, so that each loop sees the value of when it was issued.
// Resetting a reduction's Global between loops, as Airfoil resets its rms
// change, therefore leaves the loops recorded, to be fused or tiled.
func (g *Global[T]) SetValue(v T) {
	g.mustScalar("SetValue")
	lock(forNoData)
	defer unlock()
	switch rt.proc.RecordGlobal(&g.s, unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))) {
	case engine.AssignRecorded:
		return
	case engine.AssignForced:
		mustForce(rt.proc.Force())
	}
	mustHost(g.s.HostAccess(true))
	g.data[0] = v
}

func (g *Global[T]) mustScalar(method string) {
	if g.s.Dim != 1 {
		panic(fmt.Sprintf("op2: %s: %s needs dim 1 (use Data or DataRO for %d values)", g.s.Describe(), method, g.s.Dim))
	}
}
