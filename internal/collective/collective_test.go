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

// TestSingle: the one-process Comm is rank 0 of 1, and its all-to-all
// returns a copy of what it sends itself, which the collectives built on
// it pass through.
func TestSingle(t *testing.T) {
	var c Comm = Single{}
	if c.Rank() != 0 || c.Size() != 1 {
		t.Fatalf("rank %d of %d", c.Rank(), c.Size())
	}
	send := []byte{1, 2, 3}
	got, err := c.Alltoallv([][]byte{send})
	if err != nil || len(got) != 1 || string(got[0]) != string(send) {
		t.Fatalf("Alltoallv: %v, %v", got, err)
	}
	got[0][0] = 9
	if send[0] != 1 {
		t.Error("Alltoallv returned the sender's buffer")
	}
	sums, err := SumInt64(c, []int64{4, 5})
	if err != nil || sums[0] != 4 || sums[1] != 5 {
		t.Errorf("SumInt64: %v, %v", sums, err)
	}
}
