package probe_test

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// The largest probe matrices (TestProbeMatRanks's jobs, the random
// sequences of TestTileProbeRandom and TestTileProbeMPI, the seed of
// TestProbeMatRandomShapes) run one part of themselves per run, every
// class they cover (backend, rank count, partition, configuration) in
// each part: the part is chosen by the rotation number, the day's unless
// told, so that the runs of successive days cover the whole matrices.
// Each such test logs its number; OP2_PROBE_ROTATION=n replays the run
// whose number was n, and OP2_PROBE_ROTATION=all runs every part.
const rotationEnv = "OP2_PROBE_ROTATION"

// rotation is the part of the matrices a run covers: number n, or every
// part (all).
type rotation struct {
	n   int
	all bool
}

// parseRotation reads a value of OP2_PROBE_ROTATION: empty for the day's
// number (days since 1970-01-01, UTC, at now), "all", or a number.
func parseRotation(v string, now time.Time) (rotation, error) {
	switch v {
	case "":
		return rotation{n: int(now.Unix() / (24 * 60 * 60))}, nil
	case "all":
		return rotation{all: true}, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return rotation{}, strconv.ErrSyntax
	}
	return rotation{n: n}, nil
}

// probeRotation returns this run's rotation and logs it, so that a
// failure can be replayed.
func probeRotation(t *testing.T) rotation {
	t.Helper()
	v := os.Getenv(rotationEnv)
	r, err := parseRotation(v, time.Now())
	if err != nil {
		t.Fatalf("%s=%q: want a number (the rotation a run logged) or all", rotationEnv, v)
	}
	if r.all {
		t.Logf("%s=all: every part of the matrix", rotationEnv)
	} else {
		t.Logf("rotation %d: replay this run's part with %s=%d, run every part with %s=all", r.n, rotationEnv, r.n, rotationEnv)
	}
	return r
}

// pick returns the k elements of pool that run r takes, in pool order:
// those from place r.n (modulo the pool's length) on, wrapping around;
// the whole pool when r is all or k covers it.
func pick[T any](r rotation, pool []T, k int) []T {
	if r.all || k >= len(pool) {
		return pool
	}
	out := make([]T, 0, k)
	for i := range k {
		out = append(out, pool[(r.n+i)%len(pool)])
	}
	return out
}

// TestRotation: the rotation's number is the day's, or the one given;
// pick takes k elements from the rotation's place, wrapping, or all.
func TestRotation(t *testing.T) {
	day := time.Date(2026, 11, 26, 23, 59, 0, 0, time.UTC)
	for _, c := range []struct {
		v    string
		want rotation
		bad  bool
	}{
		{v: "", want: rotation{n: 20783}},
		{v: "7", want: rotation{n: 7}},
		{v: "all", want: rotation{all: true}},
		{v: "-1", bad: true},
		{v: "some", bad: true},
	} {
		got, err := parseRotation(c.v, day)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("parseRotation(%q) = %+v, %v; want %+v (error %v)", c.v, got, err, c.want, c.bad)
		}
	}
	pool := []int{10, 11, 12, 13}
	for _, c := range []struct {
		r    rotation
		k    int
		want []int
	}{
		{rotation{n: 0}, 1, []int{10}},
		{rotation{n: 5}, 1, []int{11}},
		{rotation{n: 3}, 2, []int{13, 10}},
		{rotation{n: 2}, 4, pool},
		{rotation{n: 2}, 9, pool},
		{rotation{all: true}, 1, pool},
	} {
		got := pick(c.r, pool, c.k)
		if len(got) != len(c.want) {
			t.Errorf("pick(%+v, %d) = %v, want %v", c.r, c.k, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("pick(%+v, %d) = %v, want %v", c.r, c.k, got, c.want)
				break
			}
		}
	}
}
