package tile

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// Caches are the cache sizes the automatic choice (Auto) weighs a chain
// against, in bytes.
type Caches struct {
	// L2 is one core's L2 cache: a tile's data should fit half of it.
	L2 int64
	// LLC is the last-level cache (the largest level the first CPU
	// reports, shared by the cores that share it): a chain whose data
	// fits it gains nothing from tiles.
	LLC int64
	// Sharing is the number of CPUs that share the last-level cache
	// (at least 1): each may run a tile at once.
	Sharing int
}

// DefaultCaches are the sizes used where the machine does not report its
// caches (no /sys/devices/system/cpu/cpu0/cache): 1 MiB of L2 per core
// and 32 MiB of last-level cache, as on current x86 servers (AMD Zen 4:
// 1 MiB and 32 MiB per CCD of 8 cores; Intel Sapphire Rapids: 2 MiB and
// more), shared by the CPUs the process may use, at most 8.
var DefaultCaches = Caches{L2: 1 << 20, LLC: 32 << 20, Sharing: min(runtime.NumCPU(), 8)}

// sysCaches is where Linux describes the first CPU's caches.
const sysCaches = "/sys/devices/system/cpu/cpu0/cache"

var machineCaches = sync.OnceValue(func() Caches { return ReadCaches(sysCaches) })

// MachineCaches returns the caches of this machine's first CPU, read once
// from /sys/devices/system/cpu/cpu0/cache; a size the system does not
// report is DefaultCaches'.
func MachineCaches() Caches { return machineCaches() }

// ReadCaches reads the cache sizes described in dir, a directory laid out
// as /sys/devices/system/cpu/cpu0/cache (index*/level, type, size): L2 is
// the level-2 data or unified cache, LLC the data or unified cache of the
// highest level, Sharing the CPUs its shared_cpu_list names. A size dir
// does not give (no such directory, no level-2 cache, an unreadable
// entry) is DefaultCaches'.
func ReadCaches(dir string) Caches {
	c := Caches{}
	level := 0
	entries, _ := filepath.Glob(filepath.Join(dir, "index*"))
	for _, e := range entries {
		kind := readText(filepath.Join(e, "type"))
		if kind != "Data" && kind != "Unified" {
			continue
		}
		l, err := strconv.Atoi(readText(filepath.Join(e, "level")))
		size := parseSize(readText(filepath.Join(e, "size")))
		if err != nil || size <= 0 {
			continue
		}
		if l == 2 {
			c.L2 = size
		}
		if l > level {
			level, c.LLC = l, size
			c.Sharing = countCPUs(readText(filepath.Join(e, "shared_cpu_list")))
		}
	}
	if c.L2 <= 0 {
		c.L2 = DefaultCaches.L2
	}
	if c.LLC <= 0 || level < 2 {
		c.LLC, c.Sharing = DefaultCaches.LLC, DefaultCaches.Sharing
	}
	if c.Sharing < 1 {
		c.Sharing = DefaultCaches.Sharing
	}
	return c
}

// countCPUs counts the CPUs of a Linux CPU list ("0-7,64-71"); 0 when it
// is not one.
func countCPUs(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a {
			return 0
		}
		n += b - a + 1
	}
	return n
}

// readText returns the contents of a small file without the spaces
// around them, or "" when it cannot be read.
func readText(path string) string {
	b, err := os.ReadFile(path)
	if err != nil || len(b) > 64 {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// parseSize reads a cache size as Linux writes it ("48K", "1024K",
// "32M", or bytes); 0 when it is none.
func parseSize(s string) int64 {
	mult := int64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mult, s = 1<<10, strings.TrimSuffix(s, "K")
	case strings.HasSuffix(s, "M"):
		mult, s = 1<<20, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1<<30, strings.TrimSuffix(s, "G")
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > 1<<40/mult {
		return 0
	}
	return n * mult
}

// Footprint is what Auto knows of a chain of loops.
type Footprint struct {
	// Data is the bytes of the distinct data and maps the chain's loops
	// touch (each Dat and map table whole, once).
	Data float64
	// Loops is the bytes the loops move run one by one (the sum of each
	// loop's bytes), Chain the bytes they move run in tiles whose data
	// stays in cache (each Dat and map once per chain).
	Loops, Chain float64
	// Seed is the number of elements of the first loop (the seed loop,
	// whose elements are cut into tiles).
	Seed int
}

// The automatic choice's constants.
const (
	// AutoMinGain is the largest share of the loops' bytes (Chain /
	// Loops) at which Auto still tiles: tiles that save less than a
	// tenth of the bytes do not pay for the elements they repeat and
	// the tile forms' runs.
	AutoMinGain = 0.9
	// AutoCacheShare is the share of the cache a tile's data should
	// fill: the rest holds the data of the tile's later loops' elements
	// that reach beyond its seed block, and the code's.
	AutoCacheShare = 0.5
	// AutoMinTile is the smallest tile Auto chooses, in seed elements:
	// smaller tiles spend more on their runs than memory saves.
	AutoMinTile = 256
)

// AutoL2 returns a second tile size for a chain that Auto tiles with
// size (its result), for the engine to measure beside it on one thread:
// the seed elements whose share of the chain's data fills AutoCacheShare
// of one core's L2 cache, at least AutoMinTile, rounded down to a
// multiple of 64; or 0 where that is more than half of size (or size is
// 0). Which of the two is faster depends on the machine: see Auto for an
// AMD EPYC where L2-sized tiles lost, and docs/perf.md for an Intel Xeon
// VM whose large last-level cache served one core little faster than its
// memory, where they won.
func AutoL2(c Caches, f Footprint, size int) int {
	if size <= 0 || f.Seed < 1 || f.Data <= 0 {
		return 0
	}
	perElem := f.Data / float64(f.Seed)
	small := max(AutoMinTile, int(AutoCacheShare*float64(c.L2)/perElem)&^63)
	if 2*small > size {
		return 0
	}
	return small
}

// Auto returns the tile size (seed elements per tile) for a chain with
// footprint f on a machine with caches c, or 0 where tiles do not pay:
// a chain of one loop (no footprint), a chain whose data fits the
// last-level cache (it stays there from loop to loop anyway), a chain
// whose tiles would move more than AutoMinGain of the bytes its loops
// move one by one, or one that would make fewer than two tiles.
//
// The size is the seed elements whose share of the chain's data (Data /
// Seed bytes each) fills AutoCacheShare of one CPU's part of the
// last-level cache (LLC / Sharing: the tiles that run at once each keep
// their data there), and at least of its L2 cache; at least AutoMinTile,
// rounded down to a multiple of 64. Tiles sized to the L2 cache alone
// were measured slower: on Airfoil (an AMD EPYC, 1 MiB of L2) tiles of
// 3072 cells (half the L2) ran at 1.22× (sequential) and 1.29× (openmp,
// 2 threads) eager execution's time, tiles of 32768-65536 cells at
// 0.89-0.91× and 0.71-0.75×: a small tile repeats more of its later
// loops' elements' data and splits them into shorter runs, which run
// fewer whole chunks in SIMD lanes.
func Auto(c Caches, f Footprint) int {
	if f.Seed < 2 || f.Data <= float64(c.LLC) || f.Loops <= 0 || f.Chain > AutoMinGain*f.Loops {
		return 0
	}
	perElem := f.Data / float64(f.Seed)
	share := max(float64(c.LLC)/float64(max(1, c.Sharing)), float64(c.L2))
	size := int(AutoCacheShare * share / perElem)
	size = max(AutoMinTile, size&^63)
	if 2*size > f.Seed {
		return 0
	}
	return size
}
