package engine

import (
	"testing"
	"time"
)

// TestTileTrial: a chain's measured choice goes through its ways in turn,
// untiled first, until it has tileTrials runs of each, then keeps the way
// whose fastest run was the fastest (a later way, tiles, winning a tie);
// a decided choice does not change with later runs.
func TestTileTrial(t *testing.T) {
	for _, c := range []struct {
		name string
		runs [][]int // per way, its runs' times in ms in the order they come
		want int
	}{
		{"tiles faster", [][]int{{10, 9, 11}, {8, 12, 30}}, 1},
		{"tiles slower", [][]int{{10, 9, 11}, {10, 12, 11}}, 0},
		{"a tie goes to tiles", [][]int{{9, 9, 9}, {9, 10, 11}}, 1},
		{"one slow untiled run does not decide", [][]int{{50, 7, 8}, {8, 8, 8}}, 0},
		{"the smaller tiles", [][]int{{10, 10, 10}, {9, 9, 9}, {12, 8, 9}}, 2},
		{"the larger tiles", [][]int{{10, 10, 10}, {7, 9, 9}, {12, 8, 9}}, 1},
		{"untiled of three", [][]int{{6, 10, 10}, {7, 9, 9}, {12, 8, 9}}, 0},
	} {
		tr := tileTrial{ways: len(c.runs)}
		for i := range tileTrials {
			for w := range c.runs {
				if got := tr.next(); got != w {
					t.Fatalf("%s: round %d: way %d next, want %d", c.name, i, got, w)
				}
				decided := tr.add(w, time.Duration(c.runs[w][i])*time.Millisecond)
				if last := i == tileTrials-1 && w == len(c.runs)-1; decided != last {
					t.Fatalf("%s: decided %v after round %d's way %d", c.name, decided, i, w)
				}
			}
		}
		if !tr.decided || tr.way != c.want || tr.next() != c.want {
			t.Errorf("%s: decided %v way %d next %d, want way %d", c.name, tr.decided, tr.way, tr.next(), c.want)
		}
		if tr.add((c.want+1)%len(c.runs), 0) || tr.way != c.want {
			t.Errorf("%s: a later run changed the choice", c.name)
		}
	}
}
