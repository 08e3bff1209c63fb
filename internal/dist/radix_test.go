package dist

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestLookups checks sortPairs, stableSort, index and table against sorting
// and Go maps, on keys that are dense, dense with holes, sparse,
// clustered, beyond 2³¹ and empty.
func TestLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for _, tc := range []struct {
		name string
		keys func() []int64
	}{
		{"empty", func() []int64 { return nil }},
		{"one", func() []int64 { return []int64{7} }},
		{"dense", func() []int64 { return perm64(rng, 5000, 0) }},
		{"dense beyond 2^31", func() []int64 { return perm64(rng, 5000, 1<<31+12345) }},
		{"dense beyond 2^40", func() []int64 { return perm64(rng, 3000, 1<<40-1000) }},
		{"every other", func() []int64 {
			var k []int64
			for _, v := range perm(rng, 3000) {
				k = append(k, 100+2*int64(v))
			}
			return k
		}},
		{"sparse", func() []int64 {
			var k []int64
			for _, v := range perm(rng, 2000) {
				k = append(k, int64(v)*1_000_003%(1<<31-1))
			}
			return k
		}},
		{"sparse 64-bit", func() []int64 {
			var k []int64
			for _, v := range perm(rng, 2000) {
				k = append(k, int64(v)*1_000_000_007_001%(1<<62))
			}
			return k
		}},
		{"clustered", func() []int64 {
			var k []int64
			for c := int64(0); c < 40; c++ {
				for i := int64(0); i < 50; i++ {
					k = append(k, c*1_000_000+i)
				}
			}
			rng.Shuffle(len(k), func(i, j int) { k[i], k[j] = k[j], k[i] })
			return k
		}},
		{"large keys", func() []int64 { return []int64{1<<31 - 1, 0, 1 << 30, 12345, 1 << 31, 1<<63 - 1} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys := tc.keys()
			where := map[int64]int32{}
			for i, k := range keys {
				where[k] = int32(i)
			}
			x := newIndex(keys)
			tb := newTable[int64](1)
			t32 := newTable[uint32](1) // for keys below 2³²-1
			narrow := !slices.ContainsFunc(keys, func(k int64) bool { return k >= 1<<32-1 })
			for i, k := range keys {
				tb.put(k, int32(i))
				if narrow {
					t32.put(uint32(k), int32(i))
				}
			}
			probe := append(slices.Clone(keys), -5, 3, 1<<31-2, 999_999)
			for _, k := range keys {
				if k < 1<<62 {
					probe = append(probe, k+1, k-1)
				}
			}
			for _, k := range probe {
				want, ok := where[k]
				if !ok {
					want = -1
				}
				if k < 0 {
					continue // the table takes non-negative keys only
				}
				if got := x.find(k); got != want {
					t.Fatalf("index.find(%d) = %d, want %d", k, got, want)
				}
				if got := t32.find(uint32(k)); narrow && k < 1<<32-1 && got != want {
					t.Fatalf("table[uint32].find(%d) = %d, want %d", k, got, want)
				}
				if got := tb.find(k); got != want {
					t.Fatalf("table.find(%d) = %d, want %d", k, got, want)
				}
			}
			// sortPairs: sorted keys, values carried, stable.
			k2, v2 := slices.Clone(keys), make([]int32, len(keys))
			for i := range v2 {
				v2[i] = int32(i)
			}
			sortPairs(k2, v2)
			if !slices.IsSorted(k2) {
				t.Fatalf("sortPairs: keys not sorted")
			}
			for i := range k2 {
				if keys[v2[i]] != k2[i] {
					t.Fatalf("sortPairs: value %d does not follow its key", i)
				}
			}
			// stableSort: by major, stably.
			idx := make([]int32, len(keys))
			major := make([]int32, len(keys))
			for i := range idx {
				idx[i], major[i] = int32(len(keys)-1-i), int32(rng.IntN(3))
			}
			stableSort(idx, func(i int32) int32 { return major[i] }, 3)
			for i := 1; i < len(idx); i++ {
				a, b := idx[i-1], idx[i]
				if major[a] > major[b] || major[a] == major[b] && a < b {
					t.Fatalf("stableSort: %d before %d", a, b)
				}
			}
		})
	}
}

func perm(rng *rand.Rand, n int) []int32 {
	p := make([]int32, n)
	for i, v := range rng.Perm(n) {
		p[i] = int32(v)
	}
	return p
}

// perm64 is a permutation of base to base+n-1.
func perm64(rng *rand.Rand, n int, base int64) []int64 {
	p := make([]int64, n)
	for i, v := range rng.Perm(n) {
		p[i] = base + int64(v)
	}
	return p
}
