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

// uniqueIndex returns the sorted distinct values of v (non-negative) and,
// for each entry of v, its index among them.
func uniqueIndex(v []int32) (uniq []int32, pos []int32) {
	keys := append([]int32(nil), v...)
	at := make([]int32, len(v))
	for i := range at {
		at[i] = int32(i)
	}
	sortPairs(keys, at)
	pos = make([]int32, len(v))
	for i, k := range keys {
		if i == 0 || k != keys[i-1] {
			uniq = append(uniq, k)
		}
		pos[at[i]] = int32(len(uniq) - 1)
	}
	return uniq, pos
}

// lookup maps a set's global numbers to local indices.
type lookup struct {
	g, l []int32 // sorted by g
}

func newLookup(global []int32) lookup {
	lk := lookup{g: append([]int32(nil), global...), l: make([]int32, len(global))}
	for i := range lk.l {
		lk.l[i] = int32(i)
	}
	sortPairs(lk.g, lk.l)
	return lk
}

// findAll returns the local index of each of the global numbers q, -1 for
// those absent: the queries are sorted and merged with the lookup's.
func (lk lookup) findAll(q []int32) []int32 {
	keys := append([]int32(nil), q...)
	at := make([]int32, len(q))
	for i := range at {
		at[i] = int32(i)
	}
	sortPairs(keys, at)
	out := make([]int32, len(q))
	j := 0
	for i, k := range keys {
		for j < len(lk.g) && lk.g[j] < k {
			j++
		}
		if j < len(lk.g) && lk.g[j] == k {
			out[at[i]] = lk.l[j]
		} else {
			out[at[i]] = -1
		}
	}
	return out
}
