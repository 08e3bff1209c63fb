package op2

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/goop2/op2/internal/cfront"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// Const is a named value that every kernel can read by that name, as a
// scalar (dim 1) or an array. Changing it with Set takes effect in the next
// loop without recompiling anything.
type Const[T Scalar] struct {
	c    core.Const
	mu   sync.Mutex // guards data, pending and latest
	data []T
	// pending counts the assignments recorded after recorded loops (see
	// Set) not yet made; latest holds the last one's values.
	pending int
	latest  []T
	reg     *engine.Consts
}

// NewConst declares a constant with dim values (len(data) must equal dim)
// in the default runtime (see NewConstIn).
// The name must be a C identifier not used by another constant, and not a
// C keyword (such as for, double or return), a stdint.h or stddef.h type
// name (int32_t, size_t...), an OpenCL C keyword, type or built-in (global,
// local, constant, kernel, half, float4, image2d_t, get_global_id...: they
// would break the kernel on the opencl backend), nor start with op2_ or OP2_ (reserved for
// GoOP2's generated code), __, or _ and a capital letter. dim may be at
// most MaxDim.
func NewConst[T Scalar](dim int, data []T, name string) (*Const[T], error) {
	return NewConstIn(Default(), dim, data, name)
}

// NewConstIn declares a constant in runtime r: kernels of loops run by r
// see it by name. The rules are NewConst's.
func NewConstIn[T Scalar](r *Runtime, dim int, data []T, name string) (*Const[T], error) {
	if why := cfront.ConstNameProblem(name); why != "" {
		return nil, fmt.Errorf("op2: const %q: %s", name, why)
	}
	if _, err := checkShape(fmt.Sprintf("const %q", name), "dim", 1, dim, scalarType[T]().Size()); err != nil {
		return nil, err
	}
	if len(data) != dim {
		return nil, fmt.Errorf("op2: const %q: dim %d with %d values; need one value per component", name, dim, len(data))
	}
	c := &Const[T]{reg: r.consts}
	c.data = pinned[T](c, dim)
	copy(c.data, data)
	c.c = core.Const{Name: name, Type: scalarType[T](), Dim: dim, Host: hostPtr(c.data), ID: core.NewID()}
	c.c.Version.Store(1)
	if !r.consts.Declare(&c.c) {
		return nil, fmt.Errorf("op2: const %q is already declared", name)
	}
	return c, nil
}

// Name is the constant's name.
func (c *Const[T]) Name() string { return c.c.Name }

// Value returns a copy of the current value: the last one Set gave, even
// when that assignment is recorded after recorded loops (see Set). It is
// safe to call while other goroutines call Set or run loops, and does
// not wait for running loops.
func (c *Const[T]) Value() []T {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending > 0 {
		return append([]T(nil), c.latest...)
	}
	return append([]T(nil), c.data...)
}

// Set changes the value (same number of values as dim). Loops issued after
// it see the new value.
func (c *Const[T]) Set(values ...T) error {
	if len(values) != c.c.Dim {
		return fmt.Errorf("op2: const %q: %d values given, want dim = %d", c.c.Name, len(values), c.c.Dim)
	}
	// Not while a loop runs, and after the recorded loops (see Chain),
	// which see the value of when they were issued: at once when none of
	// them uses the constant, else recorded after them.
	lock(forNoData, "Const.Set")
	defer unlock()
	switch rt.proc.RecordConst(&c.c, &c.mu, &c.pending, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), c.c.Bytes())) {
	case engine.AssignRecorded:
		c.mu.Lock()
		c.latest = append(c.latest[:0], values...)
		c.pending++
		c.mu.Unlock()
		return nil
	case engine.AssignForced:
		if forced := rt.proc.Force(); forced != nil {
			return forced
		}
	}
	c.set(values)
	return nil
}

// set copies values into the constant.
func (c *Const[T]) set(values []T) {
	c.mu.Lock()
	defer c.mu.Unlock()
	copy(c.data, values)
	c.c.Version.Add(1)
}

// Remove withdraws the constant: later kernels can no longer refer to it,
// and its name may be declared again.
func (c *Const[T]) Remove() {
	c.reg.Remove(&c.c)
}
