package op2

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/engine"
)

// Zero sets every value of the dat to zero (PyOP2's Dat.zero). On a device
// backend whose copy is current it zeroes the device copy without any
// copy between host and device: the device copy is then the current one
// and the host copy stale (state Device). Otherwise it zeroes the host
// copy. A dat declared without values, never used, stays unallocated
// (HostUnallocated: it is zero already). Under MPI it is this rank's
// own business (other ranks need not call it): the rank's elements are
// zeroed, halos included, and the next loop that reads the dat's halo
// exchanges it, since other ranks' halo copies of them may be stale. The
// error reports a device failure.
func (d *Dat[T]) Zero() error {
	forced := lock(forStorage(&d.s))
	defer unlock()
	if forced != nil {
		return forced
	}
	dist.HostWrite(&d.s)
	return apiError(d.s.Zero())
}

// CopyTo copies every value of d to dst (PyOP2's Dat.copy), which must live
// on the same set with the same dim; otherwise it returns an error naming
// both dats and changes nothing. When d's current values are on a device,
// and only there or dst has a copy on the same device, the copy is made
// on the device (dst's device copy is allocated if needed and becomes
// the current one, state Device); otherwise it is made on the host and
// dst's host copy becomes the current one. Nothing is copied between
// host and device either way. Under MPI halos are copied too, and, as
// after Data, the next loop that reads dst's halo exchanges it. Copying a
// dat to itself does nothing.
func (d *Dat[T]) CopyTo(dst *Dat[T]) error {
	if dst == nil {
		return fmt.Errorf("op2: copying %s: destination dat is nil", d.s.Describe())
	}
	if dst.s.Set != d.s.Set || dst.s.Extruded != d.s.Extruded {
		return fmt.Errorf("op2: copying %s to %s: the dats live on different sets", d.s.Describe(), dst.s.Describe())
	}
	if dst.s.Dim != d.s.Dim {
		return fmt.Errorf("op2: copying %s to %s: dims differ (%d and %d)", d.s.Describe(), dst.s.Describe(), d.s.Dim, dst.s.Dim)
	}
	forced := lock(forStorage(&d.s))
	defer unlock()
	if forced != nil {
		return forced
	}
	if dst != d {
		dist.HostWrite(&dst.s)
	}
	return apiError(dst.s.CopyFrom(&d.s))
}

// Clone returns a new dat named name on d's set with d's dim and a copy
// of d's values (PyOP2's Dat.duplicate), made as CopyTo makes it: on the
// device when d's current values are there, else on the host. Under MPI
// it is this rank's own business, like CopyTo: the clone's halo values
// are copied too, and the next loop that reads its halo exchanges it.
func (d *Dat[T]) Clone(name string) (*Dat[T], error) {
	c, err := NewDat[T](setOf(d.s.Set), d.s.Dim, nil, name)
	if err != nil {
		return nil, err
	}
	c.s.Extruded = d.s.Extruded // a clone of a dat on an extruded set is on it too
	if err := d.CopyTo(c); err != nil {
		return nil, err
	}
	return c, nil
}

// Nbytes is the size in bytes of the values this process holds for the
// dat (PyOP2's Dat.nbytes): every element's dim values, the halo's
// included under MPI, whether or not they are allocated yet.
func (d *Dat[T]) Nbytes() int { return d.s.Bytes() }

// Nbytes is the size in bytes of the global's values (PyOP2's
// Global.nbytes).
func (g *Global[T]) Nbytes() int { return g.s.Bytes() }

// Nbytes is the size in bytes of the matrix's values on this process
// (PyOP2's Mat.nbytes): its blocks' values, not the pattern's indices.
func (A *Mat[T]) Nbytes() int { return A.s.Bytes() }

// DataWO returns the values of the owned elements for writing only
// (PyOP2's Dat.data_wo): the host copy becomes the
// current one and the device copy stale, as with Data, but nothing is
// copied from the device, so the slice holds stale values wherever the
// device held the current ones. Set every value you keep; read only what
// you wrote. Under MPI, as after Data, the halos are exchanged before
// the next loop that reads them.
func (d *Dat[T]) DataWO() []T {
	forced := lock(forStorage(&d.s))
	defer unlock()
	mustForce(forced)
	d.s.WriteOnly()
	dist.HostWrite(&d.s)
	return d.data[:d.s.Set.Owned*d.s.Dim]
}

// Range returns a copy of the values of the n elements first,
// first+1, ..., first+n-1 (n×dim values), copied from wherever they are
// current: on a device backend whose copy alone is current, only those
// values are copied from the device and the dat's state does not change.
// The elements must be owned elements (under MPI, in the rank's local
// numbering: halo elements are refused); a range outside [0, Size) is
// refused with an error, as is a failing copy from the device.
func (d *Dat[T]) Range(first, n int) ([]T, error) {
	owned := d.s.Set.Owned
	if first < 0 || n < 0 || first > owned || n > owned-first {
		return nil, fmt.Errorf("op2: %s: range of %d elements from element %d is outside the %d owned elements", d.s.Describe(), n, first, owned)
	}
	out := make([]T, n*d.s.Dim)
	if n == 0 {
		return out, nil
	}
	var z T
	size := int(unsafe.Sizeof(z))
	forced := lock(forStorage(&d.s))
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if err := d.s.ReadRange(unsafe.Pointer(&out[0]), first*d.s.Dim*size, len(out)*size); err != nil {
		return nil, apiError(err)
	}
	return out, nil
}

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
