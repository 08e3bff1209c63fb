package op2

import (
	"errors"
	"fmt"
	"slices"
	"weak"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/engine"
)

// registerSubset and registerDat record a declared object for Renumber
// (engine.Process.RegisterSubset, RegisterData) without keeping it
// alive; sets and maps register their core objects themselves.
func registerSubset(sub *Subset) {
	p := weak.Make(sub)
	rt.proc.RegisterSubset(func() engine.MeshSubset {
		if sub := p.Value(); sub != nil {
			return meshSubset{sub}
		}
		return nil
	})
}

func registerDat[T Scalar](d *Dat[T]) {
	p := weak.Make(d)
	d.keep = &engine.Keep{What: fmt.Sprintf("dat %q on set %q", d.s.Name, d.s.Set.Name)}
	rt.proc.RegisterData(func() engine.MeshData {
		if d := p.Value(); d != nil {
			return meshDat[T]{d}
		}
		return nil
	}, d.keep)
}

// meshSubset is a Subset as the engine renumbers it.
type meshSubset struct{ sub *Subset }

func (m meshSubset) Parent() *core.Set { return &m.sub.parent.c }

func (m meshSubset) Renumber(newNum []int32) {
	sub := m.sub
	for k, e := range sub.indices {
		sub.indices[k] = newNum[e]
	}
	slices.Sort(sub.indices)
	sub.derived = map[*core.Map]*Map{}
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
	forced := lock(forData, "Renumber")
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

	eo := engine.Ordering{Kind: o.kind, Start: start}
	if o.m != nil {
		eo.Map = &o.m.c
	}
	if o.coords != nil {
		eo.Coords, eo.Centres = &o.coords.s, o.centres
	}
	sets, err := rt.proc.Renumber(eo)
	if err != nil {
		return nil, err
	}
	return &RenumberInfo{Ordering: o.kind, Sets: sets}, nil
}
