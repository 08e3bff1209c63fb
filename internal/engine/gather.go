package engine

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// Gathered says whether the gathers of op2's Dats and Maps on set s
// exchange over the ranks: MPI has started and s is partitioned.
func (p *Process) Gathered(s *core.Set) bool {
	_, ok := s.Halo.(*dist.SetHalo)
	return ok && p.Started() != nil
}

// GatherDat returns the owned values of the Dat whose storage is s and
// host values *data (read after its host access) in the declared
// numbering: on several ranks (Gathered) every rank's, on rank 0 (nil
// on the others). It is op2's Dat.Gather. Caller holds the lock.
func GatherDat[T any](p *Process, s *core.Storage, data *[]T) ([]T, error) {
	if err := p.HostRead("Gather", s); err != nil {
		return nil, err
	}
	owned := s.Set.Owned * s.Dim
	h, ok := s.Set.Halo.(*dist.SetHalo)
	w := p.Started()
	if ok && w != nil {
		// A rank that cannot read its values says so to every rank.
		what := fmt.Sprintf("Gather of dat %q on set %q", s.Name, s.Set.Name)
		if err := p.Fatal(dist.AgreeStep(w, what, s.HostAccess(false))); err != nil {
			return nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
		}
	} else if err := s.HostAccess(false); err != nil {
		return nil, err
	}
	if !ok || w == nil {
		if decl := s.Set.Declared; decl != nil {
			return dist.ToDeclared((*data)[:owned], s.Dim, decl), nil
		}
		return append([]T(nil), (*data)[:owned]...), nil
	}
	// Each rank sends rank 0 its owned values with their global numbers.
	var out []T
	if w.Rank() == 0 {
		out = make([]T, h.GlobalSize*s.Dim)
	}
	var z T
	elem := s.Dim * s.Type.Size()
	vals := unsafe.Slice((*byte)(s.Host), s.Set.Owned*elem)
	raw := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(out))), len(out)*int(unsafe.Sizeof(z)))
	if err := dist.GatherRows(w, h.Global[:s.Set.Owned], h.Base, vals, elem, raw); err != nil {
		return nil, p.Fatal(p.api.Internal(fmt.Errorf("gathering %s: %w", s.Describe(), err)))
	}
	return out, nil
}

// GatherDatBlock returns the values of this rank's block of the
// declared elements (the even split) of the Dat whose storage is s, as
// bytes, and the block's first element: op2's Dat.GatherBlock on
// several ranks (Gathered). Caller holds the lock.
func GatherDatBlock(p *Process, s *core.Storage) (start int, block []byte, err error) {
	if err := p.HostRead("GatherBlock", s); err != nil {
		return 0, nil, err
	}
	w, h := p.Started(), s.Set.Halo.(*dist.SetHalo)
	what := fmt.Sprintf("GatherBlock of dat %q on set %q", s.Name, s.Set.Name)
	if err := p.Fatal(dist.AgreeStep(w, what, s.HostAccess(false))); err != nil {
		return 0, nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
	}
	elem := s.Dim * s.Type.Size()
	vals := unsafe.Slice((*byte)(s.Host), s.Set.Owned*elem)
	start, block, err = dist.ToBlocks(w, h.Global[:s.Set.Owned], h.Base, vals, elem, h.GlobalSize)
	if err != nil {
		return 0, nil, p.Fatal(p.api.Internal(fmt.Errorf("%s: %w", what, err)))
	}
	return start, block, nil
}

// GatherMap returns the table of map m in the declared global numbering
// over several ranks (Gathered): every rank's rows on rank 0 (nil on the
// others) or, with block, the rows of this rank's block of the source
// elements and the block's first element. It is op2's Map.Gather,
// Gather64, GatherBlock and GatherBlock64: api names the call in errors;
// api64 is its 64-bit form, which a target set numbered beyond int32
// needs, or "" for a 64-bit call (the table is then in t64, else in
// t32). Caller holds the lock.
func (p *Process) GatherMap(m *core.Map, api, api64 string, block bool) (start int, t32 []int32, t64 []int64, err error) {
	w, from := p.Started(), m.From.Halo.(*dist.SetHalo)
	to, ok := m.To.Halo.(*dist.SetHalo)
	if !ok {
		return 0, nil, nil, p.api.Internal(fmt.Errorf("%s of map %q: its target set %q is not partitioned", api, m.Name, m.To.Name))
	}
	what := fmt.Sprintf("%s of map %q", api, m.Name)
	if err := p.Fatal(dist.AgreeStep(w, what, nil)); err != nil {
		return 0, nil, nil, p.api.Internal(fmt.Errorf("%s: %w", what, err))
	}
	// Each rank sends its owned rows, in global numbers.
	wide := api64 == "" || !to.Fits32()
	switch {
	case block && wide:
		start, t64, err = dist.BlockTable64(w, m, from, to)
	case block:
		start, t32, err = dist.BlockTable(w, m, from, to)
	case wide:
		t64, err = dist.GatherTable64(w, m, from, to)
	default:
		t32, err = dist.GatherTable(w, m, from, to)
	}
	if err != nil {
		return 0, nil, nil, p.Fatal(p.api.Internal(fmt.Errorf("%s: %w", what, err)))
	}
	if wide && api64 != "" {
		t32, err = p.narrowTable(api, api64, m, t64)
		return start, t32, nil, err
	}
	return start, t32, t64, nil
}

// narrowTable is a gathered table in 32 bits, or an error naming the
// map, the entry and the 64-bit call to use instead.
func (p *Process) narrowTable(api, api64 string, m *core.Map, t []int64) ([]int32, error) {
	out := make([]int32, len(t))
	for i, v := range t {
		if v > math.MaxInt32 {
			return nil, p.api.Internal(fmt.Errorf("%s of map %q: entry %d is %d, beyond int32 (the target set %q is numbered beyond 2³¹): use %s", api, m.Name, i, v, m.To.Name, api64))
		}
		out[i] = int32(v)
	}
	return out, nil
}
