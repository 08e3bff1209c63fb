package dist

import (
	"math"
	"slices"
)

// sortPairs sorts keys (non-negative: global numbers) in increasing
// order, carrying vals along, stably: an LSD radix sort of 11-bit digits,
// as many passes as the largest key needs (three below 2³³), linear in
// the number of pairs. It is what the layout's lookups of global numbers
// rest on (comparison sorts and binary searches cost several times more
// on meshes of millions of elements).
func sortPairs[K int32 | int64 | uint32](keys []K, vals []int32) {
	n := len(keys)
	if n < 2 {
		return
	}
	maxKey := K(0)
	for _, k := range keys {
		maxKey = max(maxKey, k)
	}
	tk, tv := make([]K, n), make([]int32, n)
	src, srcV, dst, dstV := keys, vals, tk, tv
	var count [1 << 11]int
	passes := 0
	for shift := uint(0); shift < 64 && maxKey>>shift > 0; shift += 11 {
		clear(count[:])
		for _, k := range src {
			count[k>>shift&0x7ff]++
		}
		sum := 0
		for d, c := range count {
			count[d] = sum
			sum += c
		}
		for i, k := range src {
			d := k >> shift & 0x7ff
			dst[count[d]], dstV[count[d]] = k, srcV[i]
			count[d]++
		}
		src, srcV, dst, dstV = dst, dstV, src, srcV
		passes++
	}
	if passes%2 == 1 {
		copy(keys, src)
		copy(vals, srcV)
	}
}

// table maps non-negative keys (global numbers, or their offsets from a
// set's first: K) to int32 values (local indices): open addressing with
// linear probing, at most half full, so that a lookup costs about one
// cache miss, and memory follows the keys stored (a rank's part and
// halo), not the range they come from.
type table[K uint32 | int64] struct {
	keys   []K // empty: ^K(0)
	vals   []int32
	groups uint64 // len(keys) / 16
	n      int
}

func newTable[K uint32 | int64](hint int) *table[K] {
	groups := max((2*hint+15)/16, 1)
	t := &table[K]{keys: make([]K, 16*groups), vals: make([]int32, 16*groups), groups: uint64(groups)}
	for i := range t.keys {
		t.keys[i] = ^K(0)
	}
	return t
}

// slot is where k's probe starts: keys differing only in their last 4
// bits start in one run of 16 slots, so that lookups of nearby global
// numbers (a mesh's neighbours mostly are) share cache lines; the runs
// are scattered by a multiplicative hash scaled to the number of runs.
func (t *table[K]) slot(k K) int {
	h := uint64(k>>4) * 0x9e3779b97f4a7c15 >> 32
	return int(h*t.groups>>32)*16 + int(k&15)
}

// find returns k's value, or -1.
func (t *table[K]) find(k K) int32 {
	for i := t.slot(k); ; {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case ^K(0):
			return -1
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

// put sets k's value.
func (t *table[K]) put(k K, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		*t = *newTable[K](2 * (t.n + 1))
		for i, ok := range old.keys {
			if ok != ^K(0) {
				t.put(ok, old.vals[i])
			}
		}
	}
	for i := t.slot(k); ; {
		switch t.keys[i] {
		case k:
			t.vals[i] = v
			return
		case ^K(0):
			t.keys[i], t.vals[i] = k, v
			t.n++
			return
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

// stableSort orders idx stably by key(idx[k]), each key below n: a
// counting sort, linear in len(idx) and n.
func stableSort(idx []int32, key func(int32) int32, n int) {
	keys := make([]int32, len(idx))
	start := make([]int, n+1)
	for k, i := range idx {
		keys[k] = key(i)
		start[keys[k]+1]++
	}
	for i := range n {
		start[i+1] += start[i]
	}
	out := make([]int32, len(idx))
	for k, i := range idx {
		out[start[keys[k]]] = i
		start[keys[k]]++
	}
	copy(idx, out)
}

// index maps a set's global numbers to local indices in memory
// proportional to the numbers stored: the pairs sorted by global number,
// and a directory of the sorted array's positions for pages of the
// numbers' range (about four numbers per page), so that a lookup reads
// the directory and a few neighbouring pairs. Lookups of nearby numbers
// (a mesh's neighbours mostly are) touch nearby memory. The numbers are
// held as 32-bit offsets from the least when they span less than 2³²
// (g32), else as they are (g64). Numbers that fill at least 4/9 of
// their range (a rank's part on few ranks: on 2 ranks about half, a
// little less on the smaller part) are held densely instead: a lookup is
// one read of dense, which takes 4 bytes per number of the range, no
// more memory than the pairs and the directory (9 bytes per number
// stored), and no sort to build.
type index struct {
	dense []int32  // dense[g-lo]: g's local index or -1, when not nil
	g32   []uint32 // sorted offsets from lo
	g64   []int64  // sorted numbers, when g32 is nil
	l     []int32  // the local index of each of g32 or g64
	lo    int64
	shift uint
	dir   []int32 // dir[p]: the first position whose number is on page p or later
}

func newIndex(global []int64) *index {
	x := &index{}
	if len(global) == 0 {
		return x
	}
	lo, hi := global[0], global[0]
	for _, g := range global {
		lo, hi = min(lo, g), max(hi, g)
	}
	x.lo = lo
	span := uint64(hi-lo) + 1 // up to 2⁶³
	n := len(global)
	if span <= 9*uint64(n)/4 {
		x.dense = denseIndex(global, lo, int(span))
		return x
	}
	x.l = make([]int32, n)
	for i := range x.l {
		x.l[i] = int32(i)
	}
	if hi-lo <= math.MaxUint32 {
		x.g32 = make([]uint32, n)
		for i, g := range global {
			x.g32[i] = uint32(g - lo)
		}
		sortPairs(x.g32, x.l)
	} else {
		x.g64 = slices.Clone(global)
		sortPairs(x.g64, x.l)
	}
	for span>>x.shift > uint64(n/4+1) {
		x.shift++
	}
	pages := int(span>>x.shift) + 1
	x.dir = make([]int32, pages+1)
	p := 0
	for i := range n {
		for q := int(x.offset(i) >> x.shift); p <= q; p++ {
			x.dir[p] = int32(i)
		}
	}
	for ; p <= pages; p++ {
		x.dir[p] = int32(n)
	}
	return x
}

// denseIndex is the local index of every number of [lo, lo+span), -1
// for those not in global.
func denseIndex(global []int64, lo int64, span int) []int32 {
	dense := make([]int32, span)
	for i := range dense {
		dense[i] = -1
	}
	// Backwards, so that of repeated numbers the first wins, as in the
	// sorted pairs.
	for i := len(global) - 1; i >= 0; i-- {
		dense[global[i]-lo] = int32(i)
	}
	return dense
}

// offset is the i-th sorted number less lo.
func (x *index) offset(i int) uint64 {
	if x.g32 != nil {
		return uint64(x.g32[i])
	}
	return uint64(x.g64[i] - x.lo)
}

// find returns g's local index, or -1.
func (x *index) find(g int64) int32 {
	if g < x.lo {
		return -1
	}
	off := uint64(g - x.lo)
	if x.dense != nil {
		if off >= uint64(len(x.dense)) {
			return -1
		}
		return x.dense[off]
	}
	if len(x.l) == 0 {
		return -1
	}
	p := off >> x.shift
	if p+1 >= uint64(len(x.dir)) {
		return -1
	}
	lo, hi := int(x.dir[p]), int(x.dir[p+1])
	if x.g32 != nil {
		return search(x.g32, x.l, lo, hi, uint32(off))
	}
	return search(x.g64, x.l, lo, hi, g)
}

// search finds k among the sorted keys[lo:hi] and returns its value in
// vals, or -1.
func search[K uint32 | int64](keys []K, vals []int32, lo, hi int, k K) int32 {
	for hi-lo > 8 {
		mid := (lo + hi) / 2
		if keys[mid] <= k {
			lo = mid
		} else {
			hi = mid
		}
	}
	for i := lo; i < hi; i++ {
		if keys[i] == k {
			return vals[i]
		}
	}
	return -1
}
