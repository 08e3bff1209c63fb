package dist

// sortPairs sorts keys (non-negative: global numbers) in increasing
// order, carrying vals along, stably: an LSD radix sort of 11-bit digits,
// as many passes as the largest key needs (three below 2³³), linear in
// the number of pairs. It is what the layout's lookups of global numbers
// rest on (comparison sorts and binary searches cost several times more
// on meshes of millions of elements).
func sortPairs[K int32 | int64](keys []K, vals []int32) {
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

// table maps non-negative int64 keys (global numbers) to int32 values
// (local indices): open addressing with linear probing, at most half
// full, so that a lookup costs about one cache miss, and memory
// follows the keys stored (a rank's part and halo), not the range they
// come from.
type table struct {
	keys   []int64 // -1: empty
	vals   []int32
	groups uint64 // len(keys) / 16
	n      int
}

func newTable(hint int) *table {
	groups := max((2*hint+15)/16, 1)
	t := &table{keys: make([]int64, 16*groups), vals: make([]int32, 16*groups), groups: uint64(groups)}
	for i := range t.keys {
		t.keys[i] = -1
	}
	return t
}

// slot is where k's probe starts: keys differing only in their last 4
// bits start in one run of 16 slots, so that lookups of nearby global
// numbers (a mesh's neighbours mostly are) share cache lines; the runs
// are scattered by a multiplicative hash scaled to the number of runs.
func (t *table) slot(k int64) int {
	h := uint64(k>>4) * 0x9e3779b97f4a7c15 >> 32
	return int(h*t.groups>>32)*16 + int(k&15)
}

// find returns k's value, or -1.
func (t *table) find(k int64) int32 {
	for i := t.slot(k); ; {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case -1:
			return -1
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

// put sets k's value.
func (t *table) put(k int64, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		*t = *newTable(2 * (t.n + 1))
		for i, ok := range old.keys {
			if ok >= 0 {
				t.put(ok, old.vals[i])
			}
		}
	}
	for i := t.slot(k); ; {
		switch t.keys[i] {
		case k:
			t.vals[i] = v
			return
		case -1:
			t.keys[i], t.vals[i] = k, v
			t.n++
			return
		}
		if i++; i == len(t.keys) {
			i = 0
		}
	}
}

// sortBy orders idx by (major, minor): major[k] (below nMajor) is idx[k]'s
// major key, minor(idx[k]) its minor key (non-negative). A radix sort
// by the minor keys, then a stable counting sort by the major ones.
func sortBy(major []int32, minor func(int32) int64, idx []int32, nMajor int) {
	n := len(idx)
	keys := make([]int64, n)
	pos := make([]int32, n) // positions into idx and major
	for k := range keys {
		keys[k], pos[k] = minor(idx[k]), int32(k)
	}
	sortPairs(keys, pos)
	start := make([]int, nMajor+1)
	for _, m := range major {
		start[m+1]++
	}
	for i := range nMajor {
		start[i+1] += start[i]
	}
	out := make([]int32, n)
	for _, p := range pos {
		m := major[p]
		out[start[m]] = idx[p]
		start[m]++
	}
	copy(idx, out)
}

// index maps a set's global numbers to local indices in memory
// proportional to the numbers stored: the pairs sorted by global number,
// and a directory of the sorted array's positions for pages of the
// numbers' range (about four numbers per page), so that a lookup reads
// the directory and a few neighbouring pairs. Lookups of nearby numbers
// (a mesh's neighbours mostly are) touch nearby memory.
type index struct {
	g     []int64 // sorted
	l     []int32 // the local index of each of g
	lo    int64
	shift uint
	dir   []int32 // dir[p]: the first position whose number is on page p or later
}

func newIndex(global []int64) *index {
	x := &index{g: append([]int64(nil), global...), l: make([]int32, len(global))}
	for i := range x.l {
		x.l[i] = int32(i)
	}
	sortPairs(x.g, x.l)
	if len(x.g) == 0 {
		return x
	}
	x.lo = x.g[0]
	span := uint64(x.g[len(x.g)-1]-x.lo) + 1 // up to 2⁶³
	for span>>x.shift > uint64(len(x.g)/4+1) {
		x.shift++
	}
	pages := int(span>>x.shift) + 1
	x.dir = make([]int32, pages+1)
	p := 0
	for i, g := range x.g {
		for q := int((g - x.lo) >> x.shift); p <= q; p++ {
			x.dir[p] = int32(i)
		}
	}
	for ; p <= pages; p++ {
		x.dir[p] = int32(len(x.g))
	}
	return x
}

// find returns g's local index, or -1.
func (x *index) find(g int64) int32 {
	if len(x.g) == 0 || g < x.lo {
		return -1
	}
	p := int((g - x.lo) >> x.shift)
	if p+1 >= len(x.dir) {
		return -1
	}
	lo, hi := int(x.dir[p]), int(x.dir[p+1])
	for hi-lo > 8 {
		mid := (lo + hi) / 2
		if x.g[mid] <= g {
			lo = mid
		} else {
			hi = mid
		}
	}
	for i := lo; i < hi; i++ {
		if x.g[i] == g {
			return x.l[i]
		}
	}
	return -1
}
