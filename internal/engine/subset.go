package engine

import "github.com/goop2/op2/internal/core"

// SubsetMaps gives a loop over a subset (op2.Subset) the maps from the
// subset's elements that its arguments go through instead of their own;
// the API builds them once per subset and map, and keeps them.
type SubsetMaps interface {
	// Rows is the map from the subset's elements holding, for each,
	// its row of m (a map from the parent set).
	Rows(m *core.Map) *core.Map
	// OffsetRows is a matrix argument's block offsets off (n per
	// element of the parent set) for the subset's elements, and their
	// storage.
	OffsetRows(off []int32, n int) ([]int32, *core.Storage)
}

// RestrictToSubset turns l, bound for a loop over the parent set of a
// subset, into the loop over the subset's elements, the set iter: direct
// arguments go through ident (iter → parent: the subset's indices), map
// arguments and matrices through the subset's rows of their maps (maps).
// The kernel and the results are those of the loop over the parent set
// restricted to the subset.
func RestrictToSubset(l *core.Loop, iter *core.Set, ident *core.Map, maps SubsetMaps) {
	l.Set = iter
	for i := range l.Args {
		a := &l.Args[i]
		switch a.Kind {
		case core.ArgDirect:
			a.Kind, a.Map, a.Idx = core.ArgIndirect, ident, 0
		case core.ArgIndirect, core.ArgVector:
			a.Map = maps.Rows(a.Map)
		case core.ArgMat:
			m := *a.Mat
			m.Offsets, m.OffsetData = maps.OffsetRows(a.Mat.Offsets, a.Map.Arity*m.Col.Arity)
			m.Col = maps.Rows(m.Col)
			a.Map, a.Mat = maps.Rows(a.Map), &m
		}
	}
}

// SubsetRows appends to dst, for each element e of indices in order, row
// e of table (n values per row), and returns the extended slice: a map's
// or a matrix's block offsets' rows for a subset's elements.
func SubsetRows(dst, table, indices []int32, n int) []int32 {
	for _, e := range indices {
		dst = append(dst, table[int(e)*n:(int(e)+1)*n]...)
	}
	return dst
}

// IntersectSorted returns the values in both a and b, sorted lists
// without repeats (a subset's indices), sorted.
func IntersectSorted(a, b []int32) []int32 {
	var out []int32
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i, j = i+1, j+1
		}
	}
	return out
}

// SubtractSorted returns the values of a not in b, sorted lists without
// repeats (a subset's indices), sorted.
func SubtractSorted(a, b []int32) []int32 {
	var out []int32
	j := 0
	for _, v := range a {
		for j < len(b) && b[j] < v {
			j++
		}
		if j == len(b) || b[j] != v {
			out = append(out, v)
		}
	}
	return out
}
