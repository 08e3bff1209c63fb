package dist

// sortPairs sorts keys (non-negative int32) in increasing order, carrying
// vals along, stably: an LSD radix sort of 11-bit digits, three passes at
// most, linear in the number of pairs. It is what the layout's lookups
// of global numbers rest on (comparison sorts and binary searches cost
// several times more on meshes of millions of elements).
func sortPairs(keys, vals []int32) {
	n := len(keys)
	if n < 2 {
		return
	}
	maxKey := int32(0)
	for _, k := range keys {
		maxKey = max(maxKey, k)
	}
	tk, tv := make([]int32, n), make([]int32, n)
	src, srcV, dst, dstV := keys, vals, tk, tv
	var count [1 << 11]int
	passes := 0
	for shift := uint(0); shift < 32 && maxKey>>shift > 0; shift += 11 {
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

// table maps non-negative int32 keys (global numbers) to int32 values
// (local indices): open addressing with linear probing, at most half
// full, so that a lookup costs about one cache miss, and memory follows
// the keys stored (a rank's part and halo), not the range they come from.
type table struct {
	keys []int32 // -1: empty
	vals []int32
	mask uint32
	n    int
}

func newTable(hint int) *table {
	size := 16
	for size < 2*hint {
		size *= 2
	}
	t := &table{keys: make([]int32, size), vals: make([]int32, size), mask: uint32(size - 1)}
	for i := range t.keys {
		t.keys[i] = -1
	}
	return t
}

// slot is where k's probe starts: keys differing only in their last 4
// bits start in one run of 16 slots, so that lookups of nearby global
// numbers (a mesh's neighbours mostly are) share cache lines; the runs
// are scattered by a multiplicative hash.
func (t *table) slot(k int32) uint32 {
	return ((uint32(k)>>4)*2654435761)<<4&t.mask | uint32(k)&15&t.mask
}

// find returns k's value, or -1.
func (t *table) find(k int32) int32 {
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			return t.vals[i]
		case -1:
			return -1
		}
	}
}

// put sets k's value.
func (t *table) put(k, v int32) {
	if 2*(t.n+1) > len(t.keys) {
		old := *t
		*t = *newTable(2 * (t.n + 1))
		for i, ok := range old.keys {
			if ok >= 0 {
				t.put(ok, old.vals[i])
			}
		}
	}
	for i := t.slot(k); ; i = (i + 1) & t.mask {
		switch t.keys[i] {
		case k:
			t.vals[i] = v
			return
		case -1:
			t.keys[i], t.vals[i] = k, v
			t.n++
			return
		}
	}
}

// lookup maps a set's global numbers to local indices.
type lookup struct{ t *table }

func newLookup(global []int32) lookup {
	t := newTable(len(global))
	for i, g := range global {
		t.put(g, int32(i))
	}
	return lookup{t}
}

// find returns g's local index, or -1.
func (lk lookup) find(g int32) int32 { return lk.t.find(g) }

// findAll returns the local index of each of the global numbers q, -1 for
// those absent.
func (lk lookup) findAll(q []int32) []int32 {
	out := make([]int32, len(q))
	for i, g := range q {
		out[i] = lk.t.find(g)
	}
	return out
}

// sortBy orders idx by (major, minor): major[k] (below nMajor) is idx[k]'s
// major key, minor(idx[k]) its minor key (non-negative). A radix sort
// by the minor keys, then a stable counting sort by the major ones.
func sortBy(major []int32, minor func(int32) int32, idx []int32, nMajor int) {
	n := len(idx)
	keys := make([]int32, n)
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
