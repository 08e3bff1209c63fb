package dist

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// An order of a set of n elements lists its elements (old numbers) in
// their new sequence: order[k] is the element that becomes element k. An
// order is a permutation of 0..n-1.

// RCMOrder orders the n vertices of the graph (xadj, adj) (compressed row
// form, as Adjacency builds) by reverse Cuthill–McKee: a breadth-first
// search from a pseudo-peripheral vertex of each connected component,
// visiting each vertex's neighbours in increasing degree, with the
// sequence reversed at the end. Neighbouring vertices get close numbers:
// the bandwidth of the graph's adjacency matrix is small.
func RCMOrder(n int, xadj, adj []int32) []int32 {
	deg := func(v int32) int32 { return xadj[v+1] - xadj[v] }
	order := make([]int32, 0, n)
	level := make([]int32, n) // BFS scratch: -1 unvisited in the current search
	done := make([]bool, n)   // placed in order
	for i := range level {
		level[i] = -1
	}
	var queue []int32
	// bfs runs a breadth-first search from root over unplaced vertices
	// and returns the vertices reached, in visit order, the last level's
	// vertex of smallest degree and the depth. level is reset afterwards.
	bfs := func(root int32) (reached []int32, far int32, depth int32) {
		queue = append(queue[:0], root)
		level[root] = 0
		far = root
		for h := 0; h < len(queue); h++ {
			v := queue[h]
			if level[v] > depth || level[v] == depth && deg(v) < deg(far) {
				depth, far = level[v], v
			}
			for _, w := range adj[xadj[v]:xadj[v+1]] {
				if level[w] < 0 && !done[w] {
					level[w] = level[v] + 1
					queue = append(queue, w)
				}
			}
		}
		for _, v := range queue {
			level[v] = -1
		}
		return queue, far, depth
	}
	var nb []int32
	for start := range n {
		if done[start] {
			continue
		}
		// A pseudo-peripheral root (George and Liu): move to the far
		// end of the search while that makes the search deeper.
		root := int32(start)
		_, far, depth := bfs(root)
		for {
			_, far2, d2 := bfs(far)
			if d2 <= depth {
				break
			}
			root, far, depth = far, far2, d2
		}
		// Cuthill–McKee from root.
		first := len(order)
		order = append(order, root)
		done[root] = true
		for h := first; h < len(order); h++ {
			v := order[h]
			nb = nb[:0]
			for _, w := range adj[xadj[v]:xadj[v+1]] {
				if !done[w] {
					done[w] = true
					nb = append(nb, w)
				}
			}
			slices.SortFunc(nb, func(a, b int32) int {
				if c := cmp.Compare(deg(a), deg(b)); c != 0 {
					return c
				}
				return cmp.Compare(a, b)
			})
			order = append(order, nb...)
		}
	}
	slices.Reverse(order)
	return order
}

// checkCoords refuses coordinates that recursive coordinate bisection
// cannot use: other than 1 to 3 a point, or not finite.
func checkCoords(coords []float64, dim int) error {
	if dim < 1 || dim > 3 {
		return fmt.Errorf("recursive coordinate bisection needs 1, 2 or 3 coordinates per element, not %d", dim)
	}
	for i, c := range coords {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("coordinate %d of element %d is %v", i%dim, i/dim, c)
		}
	}
	return nil
}

// widestAxis returns the coordinate along which the points idx spread
// most, the first of those that tie.
func widestAxis(coords []float64, dim int, idx []int32) int {
	axis, spread := 0, -1.0
	for d := 0; d < dim; d++ {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, e := range idx {
			lo, hi = min(lo, coords[int(e)*dim+d]), max(hi, coords[int(e)*dim+d])
		}
		if hi-lo > spread {
			axis, spread = d, hi-lo
		}
	}
	return axis
}

// RCBOrder orders n points (dim coordinates each, point after point) by
// recursive coordinate bisection down to leaves of at most leaf points:
// each part is split at the median of its widest coordinate, and the
// leaves are numbered in the order of a depth-first traversal, so points
// close in space get close numbers.
func RCBOrder(coords []float64, dim, leaf int) ([]int32, error) {
	if err := checkCoords(coords, dim); err != nil {
		return nil, err
	}
	leaf = max(leaf, 1)
	n := len(coords) / dim
	idx := make([]int32, n)
	for i := range idx {
		idx[i] = int32(i)
	}
	var split func(idx []int32)
	split = func(idx []int32) {
		for len(idx) > leaf {
			axis := widestAxis(coords, dim, idx)
			less := func(a, b int32) bool {
				ca, cb := coords[int(a)*dim+axis], coords[int(b)*dim+axis]
				return ca < cb || ca == cb && a < b
			}
			mid := len(idx) / 2
			selectNth(idx, mid, less)
			split(idx[:mid])
			idx = idx[mid:]
		}
		// A leaf keeps the order of the declared numbers.
		slices.Sort(idx)
	}
	split(idx)
	return idx, nil
}

// selectNth rearranges x so that x[k] is the element a sort by less would
// put there, with no larger element before it and no smaller one after
// (Hoare's quickselect, median-of-three pivots; less must be a strict
// total order).
func selectNth(x []int32, k int, less func(a, b int32) bool) {
	lo, hi := 0, len(x)-1
	for hi > lo {
		m := lo + (hi-lo)/2
		if less(x[m], x[lo]) {
			x[m], x[lo] = x[lo], x[m]
		}
		if less(x[hi], x[lo]) {
			x[hi], x[lo] = x[lo], x[hi]
		}
		if less(x[hi], x[m]) {
			x[hi], x[m] = x[m], x[hi]
		}
		p := x[m]
		i, j := lo, hi
		for i <= j {
			for less(x[i], p) {
				i++
			}
			for less(p, x[j]) {
				j--
			}
			if i <= j {
				x[i], x[j] = x[j], x[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return
		}
	}
}

// SpreadOrder completes orders given for some sets (order[s] != nil) to
// every set connected to them through the maps (see propagate for which
// map serves each set): the elements of a map's source set are sorted by
// the largest new number among their targets, then by the smallest, then
// by their own number; failing such a map, the elements of a map's target
// set are numbered in the order the source set's elements first refer to
// them, row after row in the new order (elements no row refers to come
// last, in their declared order). Sets no map connects to an ordered one
// keep a nil order.
//
// Both rules make a loop over the source set, in its new order, meet the
// target set's elements for the first time nearly in their new order: a
// source row comes when its last target does, and a target set is
// numbered by first reference. Hardware prefetchers follow such a rising
// sequence; sorting by the smallest target instead reaches a row's other
// targets early, out of sequence, wherever the order of the targets
// places neighbours far apart (across the cuts of a recursive bisection).
func SpreadOrder(m *Mesh, order [][]int32) {
	fromTargets := func(mp *Map) []int32 {
		newTo := Inverse(order[mp.To])
		n := m.Sets[mp.From].Size
		lo := make([]int32, n)
		hi := make([]int32, n)
		for e := range n {
			l, h := int32(math.MaxInt32), int32(-1)
			for _, t := range mp.Table[e*mp.Arity : (e+1)*mp.Arity] {
				l, h = min(l, newTo[t]), max(h, newTo[t])
			}
			lo[e], hi[e] = l, h
		}
		o := make([]int32, n)
		for i := range o {
			o[i] = int32(i)
		}
		// Two stable counting sorts: by the smallest target, then by
		// the largest.
		return countingSort(countingSort(o, lo, len(newTo)), hi, len(newTo))
	}
	toTarget := func(mp *Map) []int32 {
		n := m.Sets[mp.To].Size
		seen := make([]bool, n)
		o := make([]int32, 0, n)
		for _, e := range order[mp.From] {
			for _, t := range mp.Table[int(e)*mp.Arity : (int(e)+1)*mp.Arity] {
				if !seen[t] {
					seen[t] = true
					o = append(o, t)
				}
			}
		}
		for t := range n {
			if !seen[t] {
				o = append(o, int32(t))
			}
		}
		return o
	}
	propagate(m, order, fromTargets, toTarget)
}

// countingSort returns the elements of x sorted by key[e] (keys in
// [0,nkeys)), equal keys in the order of x.
func countingSort(x, key []int32, nkeys int) []int32 {
	start := make([]int32, nkeys+1)
	for _, e := range x {
		start[key[e]+1]++
	}
	for k := range nkeys {
		start[k+1] += start[k]
	}
	out := make([]int32, len(x))
	for _, e := range x {
		out[start[key[e]]] = e
		start[key[e]]++
	}
	return out
}

// Inverse returns the new number of each element under order (the
// inverse permutation).
func Inverse(order []int32) []int32 {
	inv := make([]int32, len(order))
	for k, e := range order {
		inv[e] = int32(k)
	}
	return inv
}
