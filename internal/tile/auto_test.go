package tile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAuto: the automatic choice tiles a chain whose data exceeds the
// last-level cache and whose tiles move fewer bytes, with tiles whose
// share of the data fills half the L2 cache, and leaves untiled a chain
// that fits the cache, one whose tiles save too little, one loop, and a
// chain too small for two tiles.
func TestAuto(t *testing.T) {
	c := Caches{L2: 1 << 20, LLC: 32 << 20}
	for _, tc := range []struct {
		name string
		f    Footprint
		want int
	}{
		// Airfoil's first chain: 121 MB over 720 000 cells, 168 bytes
		// each: 524 288 / 168 = 3120, rounded down to 3072.
		{"exceeds the cache", Footprint{Data: 121e6, Loops: 311e6, Chain: 196e6, Seed: 720000}, 3072},
		{"fits the cache", Footprint{Data: 30 << 20, Loops: 311e6, Chain: 196e6, Seed: 720000}, 0},
		{"saves too little", Footprint{Data: 86e6, Loops: 110e6, Chain: 109e6, Seed: 1438600}, 0},
		{"saves a tenth", Footprint{Data: 86e6, Loops: 100e6, Chain: 90e6, Seed: 1438600}, 8768},
		{"one element", Footprint{Data: 64e6, Loops: 100e6, Chain: 50e6, Seed: 1}, 0},
		{"moves nothing", Footprint{Data: 64e6, Seed: 1000}, 0},
		{"large elements", Footprint{Data: 1e9, Loops: 2e9, Chain: 1e9, Seed: 100000}, AutoMinTile},
		{"fewer than two tiles", Footprint{Data: 1e9, Loops: 2e9, Chain: 1e9, Seed: 300}, 0},
	} {
		if got := Auto(c, tc.f); got != tc.want {
			t.Errorf("%s: Auto(%+v) = %d, want %d", tc.name, tc.f, got, tc.want)
		}
	}
}

// TestReadCaches: the sizes come from a directory laid out as Linux's
// /sys/devices/system/cpu/cpu0/cache; instruction caches are left out;
// what it does not say is DefaultCaches'.
func TestReadCaches(t *testing.T) {
	type entry struct{ level, kind, size string }
	for _, tc := range []struct {
		name    string
		entries []entry
		want    Caches
	}{
		{"zen 3", []entry{{"1", "Data", "32K"}, {"1", "Instruction", "32K"}, {"2", "Unified", "512K"}, {"3", "Unified", "32768K"}}, Caches{L2: 512 << 10, LLC: 32 << 20}},
		{"no L3", []entry{{"1", "Data", "48K"}, {"2", "Unified", "2M"}}, Caches{L2: 2 << 20, LLC: 2 << 20}},
		{"none", nil, DefaultCaches},
		{"unreadable", []entry{{"2", "Unified", "lots"}, {"x", "Unified", "8M"}}, DefaultCaches},
		{"L1 only", []entry{{"1", "Data", "32K"}}, DefaultCaches},
	} {
		dir := t.TempDir()
		for i, e := range tc.entries {
			d := filepath.Join(dir, "index"+string(rune('0'+i)))
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]string{"level": e.level, "type": e.kind, "size": e.size} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := ReadCaches(dir); got != tc.want {
			t.Errorf("%s: ReadCaches = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if c := MachineCaches(); c.L2 <= 0 || c.LLC < c.L2 && c.LLC != DefaultCaches.LLC {
		t.Errorf("MachineCaches() = %+v", c)
	}
}
