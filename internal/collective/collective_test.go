package collective

import "testing"

// TestBlockHome: every element's home is the rank whose Block holds it,
// with more ranks than elements too.
func TestBlockHome(t *testing.T) {
	for n := range 40 {
		for ranks := 1; ranks <= 9; ranks++ {
			next := 0
			for r := range ranks {
				start, count := Block(n, r, ranks)
				if start != next {
					t.Fatalf("Block(%d, %d, %d) starts at %d, want %d", n, r, ranks, start, next)
				}
				for g := start; g < start+count; g++ {
					if h := BlockHome(n, ranks, g); h != r {
						t.Errorf("BlockHome(%d, %d, %d) = %d, want %d", n, ranks, g, h, r)
					}
				}
				next = start + count
			}
			if next != n {
				t.Fatalf("Blocks of %d over %d ranks end at %d", n, ranks, next)
			}
		}
	}
}
