package disttest

import "math/rand/v2"

// RandomTable draws the table of a map of the given arity from nf source
// elements to nt targets (nt > 0 unless nf is 0), in one of five shapes
// chosen by rng, the ones that stress a partitioner and a halo in turn:
// targets near each source's place in the target numbering, anywhere,
// rows repeating one or two targets, every row the same element, and
// strided so that each rank's targets spread over the whole set.
func RandomTable(rng *rand.Rand, nf, nt, arity int) []int32 {
	table := make([]int32, 0, nf*arity)
	kind := rng.IntN(5)
	for e := range nf {
		for j := range arity {
			var v int
			switch kind {
			case 0:
				v = ((e*nt/nf+rng.IntN(7)-3)%nt + nt) % nt
			case 1:
				v = rng.IntN(nt)
			case 2:
				v = (e*nt/nf + j%2) % nt
			case 3:
				v = nt / 2
			default:
				v = (e*7919 + j*104729) % nt
			}
			table = append(table, int32(v))
		}
	}
	return table
}
