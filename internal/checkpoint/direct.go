package checkpoint

import (
	"cmp"
	"fmt"
	"slices"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/mpi"
)

// Restoring on several ranks: each rank reads the rows of its own
// elements (owned and halo) straight from the file, when they lie in few
// runs of consecutive rows, as a partitioned mesh's usually do: a part
// of the mesh is a few bands of its numbering. Then no rank reads or
// sends another's rows, and the ranks read the file side by side. A
// set whose elements are scattered over the numbering (a shuffled mesh)
// is read as before: each rank reads its even block, and the rows go to
// the ranks that hold them (dist.FromBlocks).

// Limits of the direct reads of one set on one rank.
var (
	// exchangeOnly turns the direct reads off (SetDirectReads).
	exchangeOnly bool
	// directGap is the most rows between two of a rank's runs that one
	// read takes with them (read and left unused), saving a read.
	directGap = 16
	// directLong is the least number of elements of a segment read
	// straight into the dat; shorter ones go through a scratch buffer.
	directLong = 64
	// directMinRun is the least number of elements per read, on
	// average, of a set read directly; below it the set is exchanged.
	directMinRun = 16
	// directSlack is the most reads a set read directly may take
	// beyond the number directMinRun allows (a small set's halo).
	directSlack = 64
)

// SetDirectReads turns the direct reads of Restore under MPI on (the
// default) or off, and returns the setting it replaces: off, every dat
// is read by blocks and exchanged. It is for tests, which compare the
// two ways; every rank must make the same choice before Restore.
func SetDirectReads(on bool) (was bool) {
	was = !exchangeOnly
	exchangeOnly = !on
	return was
}

// segment is a run of a rank's elements: n local elements from local,
// whose global numbers follow one another from global.
type segment struct{ local, global, n int }

// copyRun is a segment read into the scratch buffer: its rows start
// there at row from.
type copyRun struct{ from, local, n int }

// directPlan is what a rank reads of a set's datasets, to read them
// directly: the runs of rows, in rows (Offset counts rows, Into 1 the
// scratch buffer), and the segments to copy from the scratch buffer.
type directPlan struct {
	runs    []h5.Run
	copies  []copyRun
	scratch int // rows of the scratch buffer
}

// planDirect plans the direct reads of the rows need names, the global
// number of each local element in order; ok is false when they take too
// many reads (the set is exchanged instead).
func planDirect[T int32 | int64](need []T) (p *directPlan, ok bool) {
	if exchangeOnly {
		return nil, false
	}
	limit := len(need)/directMinRun + directSlack
	var segs []segment
	for i := 0; i < len(need); {
		if len(segs) > 4*limit {
			return nil, false // scattered: not worth sorting
		}
		j := i + 1
		for j < len(need) && need[j] == need[j-1]+1 {
			j++
		}
		segs = append(segs, segment{local: i, global: int(need[i]), n: j - i})
		i = j
	}
	slices.SortFunc(segs, func(a, b segment) int { return cmp.Compare(a.global, b.global) })
	p = &directPlan{}
	covered := 0
	for i := 0; i < len(segs); {
		if segs[i].n >= directLong {
			// A long segment: one read straight into the dat.
			s := segs[i]
			p.runs = append(p.runs, h5.Run{Start: uint64(s.global), Count: uint64(s.n), Offset: uintptr(s.local)})
			covered += s.n
			i++
			continue
		}
		// Short segments, each within directGap rows of the one before:
		// one read into the scratch buffer, copied from there.
		j := i + 1
		end := segs[i].global + segs[i].n
		for j < len(segs) && segs[j].n < directLong && segs[j].global-end <= directGap {
			end = segs[j].global + segs[j].n
			j++
		}
		run := h5.Run{Start: uint64(segs[i].global), Count: uint64(end - segs[i].global), Into: 1, Offset: uintptr(p.scratch)}
		for _, s := range segs[i:j] {
			p.copies = append(p.copies, copyRun{from: p.scratch + s.global - segs[i].global, local: s.local, n: s.n})
		}
		p.scratch += int(run.Count)
		covered += int(run.Count)
		p.runs = append(p.runs, run)
		i = j
	}
	if len(p.runs) > limit || covered > 2*len(need)+directGap*directSlack {
		return nil, false
	}
	return p, true
}

// readDirect reads dat s's rows into its host copy as p plans, through
// scratch (grown as needed; returned for the next dat).
func (r *restore) readDirect(name string, s *core.Storage, p *directPlan, scratch []byte) ([]byte, error) {
	elem := s.Dim * s.Type.Size()
	if err := s.HostAccess(true); err != nil {
		return scratch, err
	}
	if total := s.Set.Total * elem; s.Bytes() < total || (total > 0 && s.Host == nil) {
		return scratch, fmt.Errorf("its host copy holds %d bytes, not the %d of its %d elements", s.Bytes(), total, s.Set.Total)
	}
	if n := p.scratch * elem; n > cap(scratch) {
		scratch = make([]byte, n)
	}
	scratch = scratch[:p.scratch*elem]
	runs := make([]h5.Run, len(p.runs))
	for i, run := range p.runs {
		run.Offset *= uintptr(elem)
		runs[i] = run
	}
	if err := r.f.ReadRuns(name, h5Type(s.Type), s.Dim, runs, s.Host, ptr(scratch)); err != nil {
		return scratch, fmt.Errorf("%s: %w", name, err)
	}
	if len(p.copies) > 0 {
		host := unsafe.Slice((*byte)(s.Host), s.Set.Total*elem)
		for _, c := range p.copies {
			copy(host[c.local*elem:(c.local+c.n)*elem], scratch[c.from*elem:(c.from+c.n)*elem])
		}
	}
	return scratch, nil
}

// planSets plans, for every set of the dats to read, whether the ranks
// read it directly, all agreeing: one collective call for all the sets.
func (r *restore) planSets() error {
	c := r.c
	r.direct = map[*core.Set]*directPlan{}
	var sets []*core.Set
	var oks []int64
	seen := map[*core.Set]bool{}
	for k, s := range c.dats {
		h, ok := s.Set.Halo.(*dist.SetHalo)
		if r.dats[k] == "" || !ok || seen[s.Set] {
			continue
		}
		seen[s.Set] = true
		rows := h.Global[:s.Set.Total] // the file's rows: global numbers less the base
		if h.Base != 0 {
			rows = make([]int64, s.Set.Total)
			for i, g := range h.Global[:s.Set.Total] {
				rows[i] = g - h.Base
			}
		}
		p, ok := planDirect(rows)
		sets = append(sets, s.Set)
		r.direct[s.Set] = p
		oks = append(oks, 0)
		if ok {
			oks[len(oks)-1] = 1
		}
	}
	if len(oks) == 0 {
		return nil
	}
	if err := c.w.AllreduceInt64(oks, mpi.Min); err != nil {
		return c.fatal(err)
	}
	for i, set := range sets {
		if oks[i] == 0 {
			delete(r.direct, set)
		}
	}
	return nil
}
