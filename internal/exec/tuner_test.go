package exec

import (
	"testing"
	"time"
)

// TestTunerChoosesFastest: the tuner hands out each candidate Reps times,
// keeps the fastest, saves it, and a tuner on the same directory starts
// with that choice.
func TestTunerChoosesFastest(t *testing.T) {
	dir := t.TempDir()
	tu := NewTuner(dir, "threads=2")
	tu.Candidates, tu.Reps = []int{0, 256, 1024}, 2
	var got int
	tu.Chosen = func(key string, bs int, times []time.Duration) { got = bs }
	key := tu.key("openmp", "shape", 1000)
	cost := map[int]time.Duration{0: 5 * time.Millisecond, 256: 3 * time.Millisecond, 1024: 4 * time.Millisecond}
	var seen []int
	for i := 0; i < 6; i++ {
		bs, measuring := tu.BlockSize(key)
		if !measuring {
			t.Fatalf("call %d: not measuring", i)
		}
		seen = append(seen, bs)
		tu.Record(key, cost[bs])
	}
	if want := []int{0, 0, 256, 256, 1024, 1024}; !equalInts(seen, want) {
		t.Errorf("candidates handed out %v, want %v", seen, want)
	}
	if bs, measuring := tu.BlockSize(key); measuring || bs != 256 || got != 256 {
		t.Errorf("after tuning: block size %d (measuring %v, reported %d), want 256", bs, measuring, got)
	}
	again := NewTuner(dir, "threads=2")
	if bs, measuring := again.BlockSize(again.key("openmp", "shape", 1000)); measuring || bs != 256 {
		t.Errorf("a new tuner on the same directory: %d (measuring %v), want 256", bs, measuring)
	}
	other := NewTuner(dir, "threads=1")
	if _, measuring := other.BlockSize(other.key("openmp", "shape", 1000)); !measuring {
		t.Errorf("another configuration reused the choice")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
