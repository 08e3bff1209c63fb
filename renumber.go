package op2

import (
	"errors"
	"fmt"
	"slices"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// register adds one object to declared, pruning collected entries when
// the lists have doubled since the last pruning.
func register(add func()) {
	rt.proc.declared.Lock()
	defer rt.proc.declared.Unlock()
	add()
	n := len(rt.proc.declared.sets) + len(rt.proc.declared.maps) + len(rt.proc.declared.dats) + len(rt.proc.declared.subsets)
	if n < 2*max(rt.proc.declared.live, 256) {
		return
	}
	rt.proc.declared.sets = pruneWeak(rt.proc.declared.sets)
	rt.proc.declared.maps = pruneWeak(rt.proc.declared.maps)
	rt.proc.declared.subsets = pruneWeak(rt.proc.declared.subsets)
	rt.proc.declared.dats = slices.DeleteFunc(rt.proc.declared.dats, func(f func() distData) bool { return f() == nil })
	rt.proc.declared.live = len(rt.proc.declared.sets) + len(rt.proc.declared.maps) + len(rt.proc.declared.dats) + len(rt.proc.declared.subsets)
}

func pruneWeak[T any](ps []weak.Pointer[T]) []weak.Pointer[T] {
	return slices.DeleteFunc(ps, func(p weak.Pointer[T]) bool { return p.Value() == nil })
}

func registerSet(s *Set) {
	p := weak.Make(s)
	register(func() { rt.proc.declared.sets = append(rt.proc.declared.sets, p) })
}

func registerMap(m *Map) {
	p := weak.Make(m)
	register(func() { rt.proc.declared.maps = append(rt.proc.declared.maps, p) })
}

func registerSubset(sub *Subset) {
	p := weak.Make(sub)
	register(func() { rt.proc.declared.subsets = append(rt.proc.declared.subsets, p) })
}

func registerDat[T Scalar](d *Dat[T]) {
	p := weak.Make(d)
	get := func() distData {
		if d := p.Value(); d != nil {
			return d
		}
		return nil
	}
	register(func() { rt.proc.declared.dats = append(rt.proc.declared.dats, get) })
}

// permute puts the dat's values in the new order: element k gets the
// values of element order[k].
func (d *Dat[T]) permute(order []int32) {
	dim := d.s.Dim
	old := slices.Clone(d.data[:len(order)*dim])
	for k, e := range order {
		copy(d.data[k*dim:(k+1)*dim], old[int(e)*dim:(int(e)+1)*dim])
	}
}

// Ordering says how Renumber orders a mesh's elements: make one with
// RCMOrdering or RCBOrdering.
type Ordering struct {
	kind    string
	m       *Map
	coords  *Dat[float64]
	centres bool // RCBCentreOrdering: the source set of m by its centres
}

// RCMOrdering orders the target set of m by reverse Cuthill–McKee on the
// graph in which two elements are adjacent when one row of m holds both
// (for a map from edges to cells, cells sharing an edge; for edges to
// nodes, the nodes joined by an edge), as OP2's op_renumber does. The
// other sets follow through the maps (see Renumber).
func RCMOrdering(m *Map) Ordering { return Ordering{kind: "rcm", m: m} }

// RCBOrdering orders the set of coords (a float64 Dat of dim 1, 2 or 3,
// such as Airfoil's node coordinates) by recursive coordinate bisection:
// the elements are split at the median of their widest coordinate, and
// each half again, down to parts of at most 8 elements, which are
// numbered in the order of the bisection tree, so that elements close in
// space get close numbers. The other sets follow through the maps (see
// Renumber). Where the heaviest loops reach another set's data through
// maps (Airfoil's edge loop and its cells), RCBCentreOrdering on that set
// gives them better locality.
func RCBOrdering(coords *Dat[float64]) Ordering { return Ordering{kind: "rcb", coords: coords} }

// RCBCentreOrdering orders the source set of m by recursive coordinate
// bisection, as RCBOrdering does, of its elements' centres: the mean of
// the coordinates coords gives the targets of each row of m (coords is on
// m's target set). For a mesh whose coordinates are on the nodes, such as
// Airfoil's, RCBCentreOrdering(x, pcell) orders the cells by their
// centres. Ordering the set whose data the heaviest loops reach through
// maps (the cells that edge loops read and increment) gives those loops
// better locality than ordering the nodes and letting the cells follow.
// The other sets follow through the maps (see Renumber).
func RCBCentreOrdering(coords *Dat[float64], m *Map) Ordering {
	return Ordering{kind: "rcb", coords: coords, m: m, centres: true}
}

// rcbLeaf is the largest part RCBOrdering does not bisect further.
const rcbLeaf = 8

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

// RenumberInfo says what Renumber reordered.
type RenumberInfo struct {
	// Ordering is "rcm" or "rcb".
	Ordering string
	// Sets names the sets renumbered: the one the ordering ordered,
	// then the others that followed it through the maps, in the order
	// they were declared.
	Sets []string
}

// Renumber reorders the elements of a mesh for locality (OP2's
// op_renumber): the ordering orders one set, and every set connected to
// it through maps follows: the elements of a map's source set are sorted
// by the largest new number among their targets (then the smallest), and
// the elements of a map's target set are numbered in the order the rows
// of a source set first refer to them, through the map from the set
// ordered first among those that have one. Every map from or to a renumbered set, every Dat on one
// and every Subset of one is changed to match, so loops compute what they
// computed before, element for element, in the new order. Loops over a
// mesh whose numbering has lost its locality (a shuffled or badly
// generated mesh) run faster once it is renumbered.
//
// Renumber must come before the first loop that uses any of the sets it
// would renumber (plans, device copies and loops made with NewLoop hold
// the old numbering) and before the first Sparsity on them; afterwards it
// returns an error and changes nothing.
// In distributed runs (more than one MPI rank) it returns an error:
// Partition already orders each rank's elements, and the halo exchange
// lists would have to follow.
//
// After Renumber the new order is the one the program sees, as in OP2:
// Dat.Data, DataRO, DataWO and Range, Map.Values, and values given to
// NewDat, NewMap and NewSubset for renumbered sets, are in the new
// numbering. The declared numbering stays available, as under MPI:
// Dat.Gather and Map.Gather return values and tables in it, the dumps
// (WriteText, WriteBinary, ReadText, ReadBinary) and package hdf5
// (WriteDat, WriteMap, DeclareDat, DeclareMap) write and read in it, so
// that a file lands on the elements it names, package vtk writes in it,
// index arguments (ArgIdx, Map.ArgIdx) pass declared numbers, and
// Set.DeclaredNumbers gives each element's declared number.
func Renumber(o Ordering) (*RenumberInfo, error) {
	forced := lock(forData)
	defer unlock()
	if forced != nil {
		return nil, forced
	}
	if w, err := mpiWorld(); err != nil {
		return nil, err
	} else if w != nil && w.Size() > 1 {
		return nil, fmt.Errorf("op2: Renumber: renumbering is not supported in distributed runs (%d MPI ranks): Partition orders each rank's elements itself", w.Size())
	}
	var start *core.Set
	switch o.kind {
	case "rcm":
		if o.m == nil {
			return nil, errors.New("op2: Renumber: RCMOrdering: map is nil")
		}
		start = o.m.c.To
	case "rcb":
		if o.coords == nil {
			return nil, errors.New("op2: Renumber: RCBOrdering: coordinates dat is nil")
		}
		start = o.coords.s.Set
		if o.centres {
			if o.m == nil {
				return nil, errors.New("op2: Renumber: RCBCentreOrdering: map is nil")
			}
			if o.m.c.To != start {
				return nil, fmt.Errorf("op2: Renumber: RCBCentreOrdering: map %q leads to set %q, but the coordinates %s are on set %q", o.m.c.Name, o.m.c.To.Name, o.coords.s.Describe(), start.Name)
			}
			start = o.m.c.From
		}
	default:
		return nil, errors.New("op2: Renumber: no ordering (use RCMOrdering or RCBOrdering)")
	}

	// The mesh as the program holds it now.
	rt.proc.declared.Lock()
	var sets []*Set
	var maps []*Map
	var dats []distData
	var subsets []*Subset
	for _, p := range rt.proc.declared.sets {
		if s := p.Value(); s != nil {
			sets = append(sets, s)
		}
	}
	for _, p := range rt.proc.declared.maps {
		if m := p.Value(); m != nil {
			maps = append(maps, m)
		}
	}
	for _, f := range rt.proc.declared.dats {
		if d := f(); d != nil {
			dats = append(dats, d)
		}
	}
	for _, p := range rt.proc.declared.subsets {
		if sub := p.Value(); sub != nil {
			subsets = append(subsets, sub)
		}
	}
	rt.proc.declared.Unlock()
	index := map[*core.Set]int{}
	mesh := &dist.Mesh{}
	for i, s := range sets {
		index[&s.c] = i
		mesh.Sets = append(mesh.Sets, dist.Set{Name: s.c.Name, Size: s.c.Owned})
	}
	for _, m := range maps {
		mesh.Maps = append(mesh.Maps, dist.Map{Name: m.c.Name, From: index[m.c.From], To: index[m.c.To], Arity: m.c.Arity, Table: m.c.Table})
	}
	si, ok := index[start]
	if !ok {
		return nil, fmt.Errorf("op2: Renumber: set %q was not declared with NewSet", start.Name)
	}

	// The first set's order, then the others'.
	order := make([][]int32, len(sets))
	var err error
	switch o.kind {
	case "rcm":
		n := start.Owned
		xadj, adj := dist.Adjacency(&dist.Map{Arity: o.m.c.Arity, Table: o.m.c.Table}, n)
		order[si] = dist.RCMOrder(n, xadj, adj)
	case "rcb":
		if err := syncHost(&o.coords.s); err != nil {
			return nil, err
		}
		var coords []float64
		if o.coords.s.Host != nil {
			coords = o.coords.data[:o.coords.s.Set.Owned*o.coords.s.Dim]
		} else {
			coords = make([]float64, o.coords.s.Set.Owned*o.coords.s.Dim) // never written: zeros
		}
		if o.centres {
			coords = centres(coords, o.coords.s.Dim, o.m.c.Table[:start.Owned*o.m.c.Arity], o.m.c.Arity)
		}
		if order[si], err = dist.RCBOrder(coords, o.coords.s.Dim, rcbLeaf); err != nil {
			if o.centres {
				// The elements are the map's rows, their coordinates centres.
				return nil, fmt.Errorf("op2: Renumber: RCBCentreOrdering on %s through map %q (centres of set %q): %w", o.coords.s.Describe(), o.m.c.Name, start.Name, err)
			}
			return nil, fmt.Errorf("op2: Renumber: RCBOrdering on %s: %w", o.coords.s.Describe(), err)
		}
	}
	first := slices.Clone(order)
	dist.SpreadOrder(mesh, order)

	info := &RenumberInfo{Ordering: o.kind}
	for i, s := range sets {
		if order[i] == nil {
			continue
		}
		if s.c.Looped {
			return nil, fmt.Errorf("op2: Renumber: set %q has already been used by a loop or a Sparsity; renumber the mesh before its first loop and its first Sparsity", s.c.Name)
		}
	}
	// Bring every affected dat's values to the host before changing
	// anything (nothing can fail after this).
	for _, d := range dats {
		s := d.storage()
		if i, ok := index[s.Set]; ok && order[i] != nil {
			if err := syncHost(s); err != nil {
				return nil, err
			}
		}
	}
	info.Sets = append(info.Sets, start.Name)
	newNum := make([][]int32, len(sets))
	for i, s := range sets {
		if order[i] == nil {
			continue
		}
		newNum[i] = dist.Inverse(order[i])
		if first[i] == nil {
			info.Sets = append(info.Sets, s.c.Name)
		}
	}
	for _, m := range maps {
		from, to := order[index[m.c.From]], newNum[index[m.c.To]]
		if from == nil && to == nil {
			continue
		}
		k := m.c.Arity
		old := slices.Clone(m.c.Table)
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
				m.c.Table[r*k+j] = t
			}
		}
	}
	for _, d := range dats {
		s := d.storage()
		i, ok := index[s.Set]
		if !ok || order[i] == nil || s.State == core.StateHostUnallocated {
			continue
		}
		if err := s.HostAccess(true); err != nil { // current already: marks a device copy stale
			return nil, err
		}
		d.permute(order[i])
	}
	for i, s := range sets {
		if order[i] == nil {
			continue
		}
		decl := make([]int32, len(order[i]))
		for k, e := range order[i] {
			if s.c.Declared != nil {
				decl[k] = s.c.Declared[e]
			} else {
				decl[k] = e
			}
		}
		s.c.Declared = decl
		if s.c.Index != nil {
			fillIndex(&s.c)
		}
	}
	for _, sub := range subsets {
		i, ok := index[&sub.parent.c]
		if !ok || newNum[i] == nil {
			continue
		}
		for k, e := range sub.indices {
			sub.indices[k] = newNum[i][e]
		}
		slices.Sort(sub.indices)
		sub.derived = map[*core.Map]*Map{}
	}
	return info, nil
}

// DeclaredNumbers returns, for each owned element, its number in the
// numbering the set was declared with: the identity, unless Renumber
// reordered the set or Partition distributed it over MPI ranks (then the
// global number of each of this rank's elements).
func (s *Set) DeclaredNumbers() []int32 {
	lock(forNoData)
	defer unlock()
	if d := declaredNumbers(&s.c); d != nil {
		return slices.Clone(d[:s.c.Owned])
	}
	out := make([]int32, s.c.Owned)
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

// declaredNumbers is the declared (global) number of each local element
// of s, or nil when that is the element's own number.
func declaredNumbers(s *core.Set) []int32 {
	if h, ok := s.Halo.(*dist.SetHalo); ok {
		return h.Global
	}
	return s.Declared
}

// toDeclared returns the owned elements' values of a renumbered set's
// storage in the declared numbering.
func toDeclared[T any](vals []T, dim int, decl []int32) []T {
	out := make([]T, len(decl)*dim)
	for i, g := range decl {
		copy(out[int(g)*dim:(int(g)+1)*dim], vals[i*dim:(i+1)*dim])
	}
	return out
}
