package engine

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// Ordering is how Renumber orders the first set (op2.Ordering).
type Ordering struct {
	Kind string // "rcm" or "rcb"
	// Start is the set ordered first: for "rcm" the target of Map, whose
	// graph is ordered; for "rcb" the set of Coords, or with Centres the
	// source of Map, whose elements are ordered by the centres of their
	// targets' coordinates.
	Start   *core.Set
	Map     *core.Map
	Coords  *core.Storage // float64 coordinates, Dim per element
	Centres bool
}

// rcbLeaf is the largest part RCB ordering does not bisect further.
const rcbLeaf = 8

// Renumber reorders the declared mesh for locality (see op2.Renumber):
// the first set in o's order, the others following through the maps;
// maps, dats, subsets and the sets' declared numbers follow. It returns
// the names of the sets it reordered, the first first. Nothing changes
// unless it succeeds. Caller holds the lock, with the recorded loops run.
func (p *Process) Renumber(o Ordering) ([]string, error) {
	d := &p.declared
	d.Lock()
	sets, maps, dats, subsets := live(d.sets), live(d.maps), liveKept(d.dats), live(d.subsets)
	d.Unlock()
	index := map[*core.Set]int{}
	mesh := &dist.Mesh{}
	for i, s := range sets {
		index[s] = i
		mesh.Sets = append(mesh.Sets, dist.Set{Name: s.Name, Size: s.Owned})
	}
	for _, m := range maps {
		mesh.Maps = append(mesh.Maps, dist.Map{Name: m.Name, From: index[m.From], To: index[m.To], Arity: m.Arity, Table: m.Table})
	}
	start := o.Start
	si, ok := index[start]
	if !ok {
		return nil, p.api.Internal(fmt.Errorf("Renumber: set %q was not declared with NewSet", start.Name))
	}

	// The first set's order, then the others'.
	order := make([][]int32, len(sets))
	var err error
	switch o.Kind {
	case "rcm":
		n := start.Owned
		xadj, adj := dist.Adjacency(&dist.Map{Arity: o.Map.Arity, Table: o.Map.Table}, n)
		order[si] = dist.RCMOrder(n, xadj, adj)
	case "rcb":
		c := o.Coords
		if err := SyncHost(c); err != nil {
			return nil, p.api.Internal(err)
		}
		coords := make([]float64, c.Set.Owned*c.Dim) // never written: zeros
		if c.Host != nil {
			coords = unsafe.Slice((*float64)(c.Host), c.Set.Owned*c.Dim)
		}
		if o.Centres {
			coords = centres(coords, c.Dim, o.Map.Table[:start.Owned*o.Map.Arity], o.Map.Arity)
		}
		if order[si], err = dist.RCBOrder(coords, c.Dim, rcbLeaf); err != nil {
			if o.Centres {
				// The elements are the map's rows, their coordinates centres.
				return nil, p.api.Internal(fmt.Errorf("Renumber: RCBCentreOrdering on %s through map %q (centres of set %q): %w", c.Describe(), o.Map.Name, start.Name, err))
			}
			return nil, p.api.Internal(fmt.Errorf("Renumber: RCBOrdering on %s: %w", c.Describe(), err))
		}
	}
	first := slices.Clone(order)
	dist.SpreadOrder(mesh, order)

	for i, s := range sets {
		if order[i] != nil && s.Looped {
			return nil, p.api.Internal(fmt.Errorf("Renumber: set %q has already been used by a loop or a Sparsity; renumber the mesh before its first loop and its first Sparsity", s.Name))
		}
	}
	// Bring every affected dat's values to the host before changing
	// anything (nothing can fail after this).
	for _, dd := range dats {
		s := dd.Storage()
		if i, ok := index[s.Set]; ok && order[i] != nil {
			if err := SyncHost(s); err != nil {
				return nil, p.api.Internal(err)
			}
		}
	}
	names := []string{start.Name}
	newNum := make([][]int32, len(sets))
	for i, s := range sets {
		if order[i] == nil {
			continue
		}
		newNum[i] = dist.Inverse(order[i])
		if first[i] == nil {
			names = append(names, s.Name)
		}
	}
	for _, m := range maps {
		renumberMap(m, order[index[m.From]], newNum[index[m.To]])
	}
	for _, dd := range dats {
		s := dd.Storage()
		i, ok := index[s.Set]
		if !ok || order[i] == nil || s.State == core.StateHostUnallocated {
			continue
		}
		if err := s.HostAccess(true); err != nil { // current already: marks a device copy stale
			return nil, p.api.Internal(err)
		}
		dd.Permute(order[i])
	}
	for i, s := range sets {
		if order[i] == nil {
			continue
		}
		decl := make([]int32, len(order[i]))
		for k, e := range order[i] {
			if s.Declared != nil {
				decl[k] = s.Declared[e]
			} else {
				decl[k] = e
			}
		}
		s.Declared = decl
		if s.Index != nil {
			p.api.RefillIndex(s)
		}
	}
	for _, sub := range subsets {
		if i, ok := index[sub.Parent()]; ok && newNum[i] != nil {
			sub.Renumber(newNum[i])
		}
	}
	return names, nil
}

// renumberMap gives map m's rows the order from (row r gets row from[r])
// and its entries the numbers to (entry t becomes to[t]); nil keeps
// either.
func renumberMap(m *core.Map, from, to []int32) {
	if from == nil && to == nil {
		return
	}
	k := m.Arity
	old := slices.Clone(m.Table)
	for r := 0; r < len(old)/max(k, 1); r++ {
		src := r
		if from != nil {
			src = int(from[r])
		}
		for j := range k {
			t := old[src*k+j]
			if to != nil {
				t = to[t]
			}
			m.Table[r*k+j] = t
		}
	}
}

// SyncHost makes the host copy of s current without marking a device
// copy stale, unless s has no values yet.
func SyncHost(s *core.Storage) error {
	if s.State == core.StateHostUnallocated {
		return nil
	}
	return s.HostAccess(false)
}

// centres returns the mean of the coordinates (dim per element) of the
// targets of each row of a map's table (arity entries a row; NewMap
// refuses arity 0). Each coordinate is divided before it is added, so
// that the mean of finite coordinates is finite however large they are.
func centres(coords []float64, dim int, table []int32, arity int) []float64 {
	rows := len(table) / arity
	out := make([]float64, rows*dim)
	for r := range rows {
		c := out[r*dim : (r+1)*dim]
		for _, t := range table[r*arity : (r+1)*arity] {
			for d := range dim {
				c[d] += coords[int(t)*dim+d] / float64(arity)
			}
		}
	}
	return out
}

// localitySamples bounds the pairs of consecutive elements MedianGap
// looks at.
const localitySamples = 4096

// MedianGap is a map's locality: the median, over consecutive source
// elements (up to localitySamples pairs, evenly spaced), of the distance
// between their first targets. A mesh numbered for locality has gaps of
// a few elements; a shuffled one, a good part of the target set.
func MedianGap(table []int32, arity, elements int) int {
	if elements < 2 || arity < 1 || len(table) < elements*arity {
		return 0
	}
	pairs := elements - 1
	step := max(1, pairs/localitySamples)
	gaps := make([]int, 0, min(pairs, localitySamples+1))
	for e := 0; e < pairs; e += step {
		d := int(table[(e+1)*arity]) - int(table[e*arity])
		gaps = append(gaps, max(d, -d))
	}
	slices.Sort(gaps)
	return gaps[len(gaps)/2]
}

// PoorLocality reports whether a map whose MedianGap is gap over a
// target set of size elements is numbered badly enough that renumbering
// pays (Airfoil shuffled: median gaps of a third of the set, and its
// loops 6.7× slower than ordered; docs/perf.md).
func PoorLocality(gap, size int) bool { return gap > max(256, size/100) }
