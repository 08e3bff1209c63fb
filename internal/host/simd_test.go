package host

import "testing"

// TestTileLanes: a tile form has the lanes of its loop's eager calls: the
// tuner's choice when there is one, else the configured lanes, else the
// widest while tuning; none with SIMD off. Naming them allocates nothing.
func TestTileLanes(t *testing.T) {
	for _, c := range []struct {
		simd  SIMD
		tuned string
		want  int
	}{
		{SIMD{}, "", 0},
		{SIMD{Lanes: 4}, "", 4},
		{SIMD{Lanes: 8}, "", 8},
		{SIMD{Off: true}, "", 0},
		{SIMD{Off: true, Tune: true}, "", 0},
		{SIMD{Tune: true}, "", 8},
		{SIMD{Lanes: 4, Tune: true}, "", 4},
		{SIMD{Tune: true}, "simd4", 4},
		{SIMD{Tune: true}, "scalar", 0},
		{SIMD{Lanes: 8, Tune: true}, "owner+simd4", 4},
		{SIMD{Lanes: 8, Tune: true}, "colour+scalar", 0},
		{SIMD{Lanes: 4, Tune: true}, "owner", 4}, // a loop with no lanes to choose
		{SIMD{Tune: true}, "simd16", 8},          // no such width
	} {
		if got := c.simd.TileLanes(nil, c.tuned); got != c.want {
			t.Errorf("%+v.TileLanes(%q) = %d, want %d", c.simd, c.tuned, got, c.want)
		}
	}
	s := SIMD{Tune: true}
	if a := testing.AllocsPerRun(10, func() { _ = LaneVariant(s.TileLanes(nil, "owner+simd8")) }); a != 0 {
		t.Errorf("naming a tile form's lanes allocates %v times", a)
	}
}
