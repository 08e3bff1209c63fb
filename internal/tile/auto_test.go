package tile

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAuto: the automatic choice tiles a chain whose data exceeds the
// last-level cache and whose tiles move fewer bytes, with tiles whose
// share of the data fills half of one CPU's part of the last-level cache
// (at least of its L2 cache), and leaves untiled a chain that fits the
// cache, one whose tiles save too little, one loop, and a chain too
// small for two tiles.
func TestAuto(t *testing.T) {
	zen4 := Caches{L2: 1 << 20, LLC: 32 << 20, Sharing: 8}
	for _, tc := range []struct {
		name string
		c    Caches
		f    Footprint
		want int
	}{
		// Airfoil's first chain: 121 MB over 720 000 cells, 168 bytes
		// each: 2 MiB / 168 = 12478, rounded down to 12416.
		{"exceeds the cache", zen4, Footprint{Data: 121e6, Loops: 311e6, Chain: 196e6, Seed: 720000}, 12416},
		// Two CPUs share it: 8 MiB / 168 = 49913.
		{"two CPUs", Caches{L2: 1 << 20, LLC: 32 << 20, Sharing: 2}, Footprint{Data: 121e6, Loops: 311e6, Chain: 196e6, Seed: 720000}, 49856},
		// A CPU's part of the last-level cache is smaller than its L2:
		// half the L2, 1 MiB / 168 = 6239.
		{"large L2", Caches{L2: 2 << 20, LLC: 8 << 20, Sharing: 8}, Footprint{Data: 121e6, Loops: 311e6, Chain: 196e6, Seed: 720000}, 6208},
		{"fits the cache", zen4, Footprint{Data: 30 << 20, Loops: 311e6, Chain: 196e6, Seed: 720000}, 0},
		{"saves too little", zen4, Footprint{Data: 86e6, Loops: 110e6, Chain: 109e6, Seed: 1438600}, 0},
		{"saves a tenth", zen4, Footprint{Data: 86e6, Loops: 100e6, Chain: 90e6, Seed: 1438600}, 35072},
		{"one element", zen4, Footprint{Data: 64e6, Loops: 100e6, Chain: 50e6, Seed: 1}, 0},
		{"moves nothing", zen4, Footprint{Data: 64e6, Seed: 1000}, 0},
		{"large elements", zen4, Footprint{Data: 1e9, Loops: 2e9, Chain: 1e9, Seed: 100000}, AutoMinTile},
		{"fewer than two tiles", zen4, Footprint{Data: 1e9, Loops: 2e9, Chain: 1e9, Seed: 300}, 0},
	} {
		if got := Auto(tc.c, tc.f); got != tc.want {
			t.Errorf("%s: Auto(%+v, %+v) = %d, want %d", tc.name, tc.c, tc.f, got, tc.want)
		}
	}
}

// TestAutoL2: the second size fills half of one core's L2 cache, only
// where it is at most half of Auto's.
func TestAutoL2(t *testing.T) {
	airfoil := Footprint{Data: 121e6, Loops: 311e6, Chain: 196e6, Seed: 720000}
	for _, tc := range []struct {
		name       string
		c          Caches
		f          Footprint
		size, want int
	}{
		// 1 MiB / 168 = 6241, rounded down to 6208.
		{"Intel VM", Caches{L2: 2 << 20, LLC: 480 << 20, Sharing: 2}, airfoil, 748864, 6208},
		// 512 KiB / 168 = 3120: 3072, at most half of 12416.
		{"zen4", Caches{L2: 1 << 20, LLC: 32 << 20, Sharing: 8}, airfoil, 12416, 3072},
		{"not half of Auto's", Caches{L2: 2 << 20, LLC: 8 << 20, Sharing: 8}, airfoil, 6208, 0},
		{"no tiles", Caches{L2: 1 << 20}, airfoil, 0, 0},
		{"large elements", Caches{L2: 1 << 20}, Footprint{Data: 1e9, Loops: 2e9, Chain: 1e9, Seed: 100000}, 4096, AutoMinTile},
	} {
		if got := AutoL2(tc.c, tc.f, tc.size); got != tc.want {
			t.Errorf("%s: AutoL2(%+v, %+v, %d) = %d, want %d", tc.name, tc.c, tc.f, tc.size, got, tc.want)
		}
	}
}

// TestReadCaches: the sizes come from a directory laid out as Linux's
// /sys/devices/system/cpu/cpu0/cache, the CPUs sharing the last-level
// cache from its shared_cpu_list; instruction caches are left out; what
// it does not say is DefaultCaches'.
func TestReadCaches(t *testing.T) {
	type entry struct{ level, kind, size, cpus string }
	for _, tc := range []struct {
		name    string
		entries []entry
		want    Caches
	}{
		{"zen 3", []entry{{"1", "Data", "32K", "0,64"}, {"1", "Instruction", "32K", "0,64"}, {"2", "Unified", "512K", "0,64"}, {"3", "Unified", "32768K", "0-7,64-71"}},
			Caches{L2: 512 << 10, LLC: 32 << 20, Sharing: 16}},
		{"no L3", []entry{{"1", "Data", "48K", "0"}, {"2", "Unified", "2M", "0-1"}}, Caches{L2: 2 << 20, LLC: 2 << 20, Sharing: 2}},
		{"no CPU list", []entry{{"2", "Unified", "2M", ""}, {"3", "Unified", "16M", "x"}}, Caches{L2: 2 << 20, LLC: 16 << 20, Sharing: DefaultCaches.Sharing}},
		{"none", nil, DefaultCaches},
		{"unreadable", []entry{{"2", "Unified", "lots", "0"}, {"x", "Unified", "8M", "0"}}, DefaultCaches},
		{"L1 only", []entry{{"1", "Data", "32K", "0"}}, DefaultCaches},
	} {
		dir := t.TempDir()
		for i, e := range tc.entries {
			d := filepath.Join(dir, "index"+string(rune('0'+i)))
			if err := os.Mkdir(d, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, v := range map[string]string{"level": e.level, "type": e.kind, "size": e.size, "shared_cpu_list": e.cpus} {
				if err := os.WriteFile(filepath.Join(d, name), []byte(v+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := ReadCaches(dir); got != tc.want {
			t.Errorf("%s: ReadCaches = %+v, want %+v", tc.name, got, tc.want)
		}
	}
	if c := MachineCaches(); c.L2 <= 0 || c.LLC <= 0 || c.Sharing < 1 {
		t.Errorf("MachineCaches() = %+v", c)
	}
}
