package engine

import (
	"fmt"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// The MPI part of OP2's dat dumps (op2's Dat.WriteText and the rest;
// internal/dumpfile holds the formats): rank 0 reads or writes the file,
// and every rank returns its result.

// ShareError gives every rank rank 0's error err (collective under MPI),
// and an error when the ranks are at different operations (what).
func (p *Process) ShareError(what string, err error) error {
	w := p.Started()
	if w == nil || w.Size() == 1 {
		return err
	}
	if w.Rank() != 0 {
		err = nil
	}
	aerr := p.Fatal(dist.AgreeStep(w, what, err))
	switch {
	case aerr == nil:
		return nil
	case err != nil:
		return err // rank 0's own error, as the other ranks report it
	}
	return p.api.Internal(fmt.Errorf("%s: %w", what, aerr))
}

// LoadDat puts vals, the values of every element of s's set in the
// numbering the mesh was declared with (rank 0's; the other ranks may
// pass none), into s. Under MPI it is collective: each rank gets its
// local elements' values, halo included, by global number. Caller holds
// the lock.
func (p *Process) LoadDat(s *core.Storage, vals []byte) error {
	elem := s.Dim * s.Type.Size()
	h, ok := s.Set.Halo.(*dist.SetHalo)
	w := p.Started()
	if !ok || w == nil {
		if err := p.api.Internal(s.HostAccess(true)); err != nil {
			return err
		}
		host := unsafe.Slice((*byte)(s.Host), s.Set.Owned*elem)
		if decl := s.Set.Declared; decl != nil { // renumbered: the file is in the declared numbering
			for i, g := range decl {
				copy(host[i*elem:(i+1)*elem], vals[int(g)*elem:(int(g)+1)*elem])
			}
			return nil
		}
		copy(host, vals)
		return nil
	}
	// Each rank gets its local elements from rank 0 by global number.
	total := s.Set.Total
	got, err := dist.ScatterRows(w, h.Global[:total], h.Base, vals, elem)
	if err != nil {
		return p.Fatal(p.api.Internal(fmt.Errorf("reading %s: %w", s.Describe(), err)))
	}
	if err := p.api.Internal(s.HostAccess(true)); err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(s.Host), total*elem), got)
	s.HaloStale = false // the halo got the file's values too
	return nil
}
