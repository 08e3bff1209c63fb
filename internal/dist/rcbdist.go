package dist

import (
	"math"

	"github.com/goop2/op2/internal/collective"
)

// rcbDistributed is RCBOwners over points spread across the ranks: this
// rank holds the points [first, first+len(coords)/dim) of the global
// numbering, and gets their owners. Coordinates stay where they are: each
// bisection finds, for every part still to split, its widest axis (a
// reduction of minima and maxima) and the point of the cut's rank in the
// order of (coordinate, global number) by a radix selection over the
// ranks (12 rounds of 8 bits, one reduction of histograms each). The
// result equals RCBOwners on the gathered coordinates.
func rcbDistributed(c Comm, coords []float64, dim, first, ranks int) ([]int32, error) {
	if err := AgreeStep(c, "Partition: the coordinates", checkCoords(coords, dim)); err != nil {
		return nil, err
	}
	n := len(coords) / dim
	// group[i] is the first rank of the part point i is in; parts[f] the
	// number of ranks of the part starting at rank f.
	group := make([]int32, n)
	parts := make([]int, ranks)
	parts[0] = ranks
	keys := make([]uint64, n) // the current axis's key of each point
	for {
		var active []int // first ranks of the parts to split, increasing
		for f, p := range parts {
			if p > 1 {
				active = append(active, f)
			}
		}
		if len(active) == 0 {
			break
		}
		slot := make([]int, ranks) // active part's index by first rank, -1 if none
		for i := range slot {
			slot[i] = -1
		}
		for a, f := range active {
			slot[f] = a
		}
		// Counts and extents per active part.
		na := len(active)
		lo, hi := make([]float64, na*dim), make([]float64, na*dim)
		for i := range lo {
			lo[i], hi[i] = math.Inf(1), math.Inf(-1)
		}
		count := make([]int64, na)
		for i := 0; i < n; i++ {
			a := slot[group[i]]
			if a < 0 {
				continue
			}
			count[a]++
			for d := 0; d < dim; d++ {
				x := coords[i*dim+d]
				lo[a*dim+d], hi[a*dim+d] = min(lo[a*dim+d], x), max(hi[a*dim+d], x)
			}
		}
		count, err := collective.SumInt64(c, count)
		if err != nil {
			return nil, err
		}
		if lo, hi, err = collective.MinMax(c, lo, hi); err != nil {
			return nil, err
		}
		axis := make([]int, na)
		cut := make([]int64, na)
		for a, f := range active {
			spread := -1.0
			for d := 0; d < dim; d++ {
				if s := hi[a*dim+d] - lo[a*dim+d]; s > spread {
					axis[a], spread = d, s
				}
			}
			cut[a] = count[a] * int64(parts[f]/2) / int64(parts[f])
		}
		for i := 0; i < n; i++ {
			if a := slot[group[i]]; a >= 0 {
				keys[i] = floatKey(coords[i*dim+axis[a]])
			}
		}
		// Radix selection of the key of rank cut[a] in each active part
		// (keys are (coordinate key, global number), unique). A part
		// with cut == count (only when empty) sends everything left.
		prefHi := make([]uint64, na)
		prefLo := make([]uint32, na)
		below := make([]int64, na)
		hist := make([]int64, na*256)
		for round := 0; round < 12; round++ {
			clear(hist)
			for i := 0; i < n; i++ {
				a := slot[group[i]]
				if a < 0 || !keyMatches(keys[i], uint32(first+i), prefHi[a], prefLo[a], round) {
					continue
				}
				hist[a*256+int(keyDigit(keys[i], uint32(first+i), round))]++
			}
			tot, err := collective.SumInt64(c, hist)
			if err != nil {
				return nil, err
			}
			for a := range active {
				if cut[a] >= count[a] {
					continue
				}
				k := cut[a] - below[a]
				for d := 0; d < 256; d++ {
					h := tot[a*256+d]
					if k < h {
						setDigit(&prefHi[a], &prefLo[a], round, uint64(d))
						break
					}
					k -= h
					below[a] += h
				}
			}
		}
		for i := 0; i < n; i++ {
			a := slot[group[i]]
			if a < 0 {
				continue
			}
			f := active[a]
			left := cut[a] >= count[a] || keys[i] < prefHi[a] || keys[i] == prefHi[a] && uint32(first+i) < prefLo[a]
			if !left {
				group[i] = int32(f + parts[f]/2)
			}
		}
		for _, f := range active {
			p := parts[f]
			parts[f], parts[f+p/2] = p/2, p-p/2
		}
	}
	return group, nil
}

// floatKey maps a finite float64 to a uint64 in the same order (−0 and +0
// equal, as the comparison in RCBOwners has them).
func floatKey(x float64) uint64 {
	if x == 0 {
		x = 0
	}
	u := math.Float64bits(x)
	if u>>63 == 1 {
		return ^u
	}
	return u | 1<<63
}

// The 96-bit key of a point is (hi, lo): 8 digits of 8 bits of hi, most
// significant first, then 4 of lo.

func keyDigit(hi uint64, lo uint32, round int) uint64 {
	if round < 8 {
		return hi >> (56 - 8*round) & 0xff
	}
	return uint64(lo>>(24-8*(round-8))) & 0xff
}

// keyMatches reports whether the key's digits before round equal the
// prefix's.
func keyMatches(hi uint64, lo uint32, pHi uint64, pLo uint32, round int) bool {
	if round <= 8 {
		if round == 0 {
			return true
		}
		s := 64 - 8*round
		return hi>>s == pHi>>s
	}
	if hi != pHi {
		return false
	}
	s := 32 - 8*(round-8)
	return lo>>s == pLo>>s
}

func setDigit(pHi *uint64, pLo *uint32, round int, d uint64) {
	if round < 8 {
		*pHi |= d << (56 - 8*round)
		return
	}
	*pLo |= uint32(d) << (24 - 8*(round-8))
}
