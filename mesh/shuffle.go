package mesh

import "math/rand/v2"

// Shuffled returns a copy of m with the elements of every set — nodes,
// cells, edges and boundary edges — renumbered in a random order drawn
// from seed, and every map and array changed to match: the same mesh
// with the locality of its numbering lost. Each element keeps its row
// (a cell's nodes stay counter-clockwise, an edge keeps its
// orientation). It is for measuring what renumbering recovers (op2.Renumber).
func (m *Mesh) Shuffled(seed uint64) *Mesh {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	// perm[new] = old; inv[old] = new.
	perm := func(n int) (perm, inv []int32) {
		perm = make([]int32, n)
		inv = make([]int32, n)
		for i, p := range rng.Perm(n) {
			perm[i] = int32(p)
			inv[p] = int32(i)
		}
		return perm, inv
	}
	nodePerm, nodeNew := perm(m.NNode)
	cellPerm, cellNew := perm(m.NCell)
	edgePerm, _ := perm(m.NEdge)
	bedgePerm, _ := perm(m.NBedge)
	// rows returns the rows of v (k per element) in the order of p, each
	// entry renamed by rename (nil: unchanged).
	rows := func(v []int32, k int, p, rename []int32) []int32 {
		out := make([]int32, len(v))
		for i, e := range p {
			for j := range k {
				t := v[int(e)*k+j]
				if rename != nil {
					t = rename[t]
				}
				out[i*k+j] = t
			}
		}
		return out
	}
	s := &Mesh{NNode: m.NNode, NCell: m.NCell, NEdge: m.NEdge, NBedge: m.NBedge}
	s.X = make([]float64, len(m.X))
	for i, e := range nodePerm {
		s.X[2*i], s.X[2*i+1] = m.X[2*e], m.X[2*e+1]
	}
	s.Cell = rows(m.Cell, 4, cellPerm, nodeNew)
	s.Edge = rows(m.Edge, 2, edgePerm, nodeNew)
	s.Ecell = rows(m.Ecell, 2, edgePerm, cellNew)
	s.Bedge = rows(m.Bedge, 2, bedgePerm, nodeNew)
	s.Becell = rows(m.Becell, 1, bedgePerm, cellNew)
	s.Bound = rows(m.Bound, 1, bedgePerm, nil)
	return s
}
