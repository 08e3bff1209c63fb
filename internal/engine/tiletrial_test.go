package engine

import (
	"testing"
	"time"
)

// TestTileTrial: a chain's measured choice alternates untiled and tiled
// runs, starting untiled, until it has tileTrials of each, then keeps
// tiles only when its fastest tiled run was at most its fastest untiled
// one; a decided choice does not change with later runs.
func TestTileTrial(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	for _, c := range []struct {
		name           string
		untiled, tiled []int // ms, in the order the runs come
		tiles          bool
	}{
		{"tiles faster", []int{10, 9, 11}, []int{8, 12, 30}, true},
		{"tiles slower", []int{10, 9, 11}, []int{10, 12, 11}, false},
		{"a tie keeps tiles", []int{9, 9, 9}, []int{9, 10, 11}, true},
		{"one slow untiled run does not decide", []int{50, 7, 8}, []int{8, 8, 8}, false},
	} {
		var tr tileTrial
		for i := range tileTrials {
			if tr.next() {
				t.Fatalf("%s: run %d: tiled first, want untiled", c.name, 2*i)
			}
			if tr.add(false, ms(c.untiled[i])) {
				t.Fatalf("%s: decided after an untiled run %d", c.name, i)
			}
			if !tr.next() {
				t.Fatalf("%s: run %d: untiled, want tiled", c.name, 2*i+1)
			}
			decided := tr.add(true, ms(c.tiled[i]))
			if decided != (i == tileTrials-1) {
				t.Fatalf("%s: decided %v after tiled run %d", c.name, decided, i)
			}
		}
		if !tr.decided || tr.tiles != c.tiles || tr.next() != c.tiles {
			t.Errorf("%s: decided %v tiles %v next %v, want tiles %v", c.name, tr.decided, tr.tiles, tr.next(), c.tiles)
		}
		if tr.add(!c.tiles, 0) || tr.tiles != c.tiles {
			t.Errorf("%s: a later run changed the choice", c.name)
		}
	}
}
