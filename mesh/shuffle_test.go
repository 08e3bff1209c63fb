package mesh

import (
	"slices"
	"strconv"
	"testing"
)

// TestShuffled: the shuffled mesh is valid, differs from the original and
// describes the same geometry: every cell, edge and boundary edge has the
// same node coordinates, in the same order, as one of the original's.
func TestShuffled(t *testing.T) {
	m, err := Generate(6, 5)
	if err != nil {
		t.Fatal(err)
	}
	s := m.Shuffled(3)
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	if slices.Equal(s.Cell, m.Cell) || slices.Equal(s.X, m.X) {
		t.Fatal("nothing was shuffled")
	}
	if again := m.Shuffled(3); !slices.Equal(again.Edge, s.Edge) {
		t.Error("the same seed gave another order")
	}
	// Each element as the coordinates of its nodes (and its cells' first
	// node's coordinates, and boundary kinds), as a set of strings.
	shape := func(m *Mesh) []string {
		xy := func(n int32) [2]float64 { return [2]float64{m.X[2*n], m.X[2*n+1]} }
		var out []string
		for c := 0; c < m.NCell; c++ {
			out = append(out, fmtKey("c", xy(m.Cell[4*c]), xy(m.Cell[4*c+1]), xy(m.Cell[4*c+2]), xy(m.Cell[4*c+3])))
		}
		for e := 0; e < m.NEdge; e++ {
			out = append(out, fmtKey("e", xy(m.Edge[2*e]), xy(m.Edge[2*e+1]), xy(m.Cell[4*m.Ecell[2*e]]), xy(m.Cell[4*m.Ecell[2*e+1]])))
		}
		for e := 0; e < m.NBedge; e++ {
			out = append(out, fmtKey("b", xy(m.Bedge[2*e]), xy(m.Bedge[2*e+1]), xy(m.Cell[4*m.Becell[e]]), [2]float64{float64(m.Bound[e])}))
		}
		slices.Sort(out)
		return out
	}
	if !slices.Equal(shape(s), shape(m)) {
		t.Error("the shuffled mesh is not the same mesh")
	}
}

func fmtKey(kind string, p ...[2]float64) string {
	b := []byte(kind)
	for _, q := range p {
		b = append(b, ' ')
		b = append(b, []byte(strconv.FormatFloat(q[0], 'g', -1, 64)+","+strconv.FormatFloat(q[1], 'g', -1, 64))...)
	}
	return string(b)
}
