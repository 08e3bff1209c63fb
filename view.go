package op2

import (
	"fmt"
)

// DatView is one component of a Dat seen as a Dat of dim 1 (PyOP2's
// DatView(dat, index)): a loop argument made from it passes the kernel a
// T* to that one value of each element, directly or through a map, with
// any access a Dat of dim 1 allows. It holds no values of its own: loops
// read and write the Dat's, and under MPI the Dat's halo is exchanged
// and marked stale as for the Dat itself.
//
// The component is part of a loop's shape, as a map column is: views of
// different components get programs of their own (each compiled once and
// cached), in which the component is a constant offset.
//
// In one loop, views of different components of one Dat never conflict:
// they pass disjoint values, so they may be written, incremented or read
// together in any combination. Views of the same component follow the
// rules of ParLoop for one Dat. A view together with the whole Dat (or a
// view of another component of a Dat passed whole) is refused when
// either modifies the data; reading both is allowed.
type DatView[T Scalar] struct {
	d    *Dat[T]
	comp int
}

// View returns the view of component comp of the dat's values, 0 ≤ comp <
// Dim (PyOP2's DatView(dat, comp)); another component is refused with an
// error naming the dat and its dim.
func (d *Dat[T]) View(comp int) (*DatView[T], error) {
	if d == nil {
		return nil, fmt.Errorf("op2: view of component %d: the dat is nil", comp)
	}
	if comp < 0 || comp >= d.s.Dim {
		return nil, fmt.Errorf("op2: view of %s: component %d is out of range [0, %d)", d.s.Describe(), comp, d.s.Dim)
	}
	if d.s.Extruded != nil {
		return nil, fmt.Errorf("op2: view of %s: the dat is on extruded set %q, whose dats have no views; declare the component as a dat of its own", d.s.Describe(), d.s.Extruded.Name)
	}
	return &DatView[T]{d: d, comp: comp}, nil
}

// Dat is the dat the view is a component of.
func (v *DatView[T]) Dat() *Dat[T] { return v.d }

// Component is the component of the dat's elements the view passes.
func (v *DatView[T]) Component() int { return v.comp }

// Name is the view's name: the dat's name and the component, as in
// "q[2]".
func (v *DatView[T]) Name() string { return fmt.Sprintf("%s[%d]", v.d.s.Name, v.comp) }

// Dim is the number of values per element the kernel sees: 1.
func (v *DatView[T]) Dim() int { return 1 }

// Set is the set the dat lives on.
func (v *DatView[T]) Set() *Set { return v.d.Set() }

// Arg passes the view directly: the kernel gets a T* to the loop
// element's component.
func (v *DatView[T]) Arg(acc Access) Arg { return v.view(v.dat().Arg(acc)) }

// ArgMap passes the view through column idx of m (with access Min or Max
// as well, see the Access constants): the kernel gets a T* to the
// component of element m[e][idx].
func (v *DatView[T]) ArgMap(acc Access, m *Map, idx int) Arg {
	return v.view(v.dat().ArgMap(acc, m, idx))
}

// ArgVec passes the view through every column of m: the kernel gets a
// T** holding one pointer per column, each to the component of that
// column's element.
func (v *DatView[T]) ArgVec(acc Access, m *Map) Arg { return v.view(v.dat().ArgVec(acc, m)) }

// dat is the view's dat; nil for a nil view, whose arguments the loop
// refuses as a nil Dat's.
func (v *DatView[T]) dat() *Dat[T] {
	if v == nil {
		return nil
	}
	return v.d
}

// view makes a, an argument passing the whole dat, pass the component.
func (v *DatView[T]) view(a Arg) Arg {
	if v == nil {
		return a
	}
	a.e.Core.View, a.e.Core.Comp = true, v.comp
	return a
}

// DataRO returns a copy of the component's values for the owned elements,
// one per element, for reading; as Dat.DataRO, it leaves a device copy
// valid and panics with the error its Err form, DataROErr, would return.
func (v *DatView[T]) DataRO() []T { return orPanic(v.dataROErr("DatView.DataRO")) }

// DataROErr is DataRO, returning as an error the failure of a recorded
// loop it runs first or of the copy from the device.
func (v *DatView[T]) DataROErr() ([]T, error) { return v.dataROErr("DatView.DataROErr") }

// dataROErr is DataROErr for the API call named api.
func (v *DatView[T]) dataROErr(api string) ([]T, error) {
	forced := lock(forStorage(&v.d.s), api)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	d := v.d
	if err := rt.proc.HostRead("DataRO", &d.s); err != nil {
		return nil, err
	}
	if err := d.s.HostAccess(false); err != nil {
		return nil, apiError(err)
	}
	n, dim := d.s.Set.Owned, d.s.Dim
	out := make([]T, n)
	for e := range out {
		out[e] = d.data[e*dim+v.comp]
	}
	return out, nil
}
