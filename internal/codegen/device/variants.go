package device

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goop2/op2/internal/core"
)

// TunedWorkGroupSizes are the work-group sizes the auto-tuner tries for
// every device loop, besides the configured one.
var TunedWorkGroupSizes = []int{64, 128, 256}

// Variants names the ways a device backend can run l (its signature set)
// for the auto-tuner: each work-group size of TunedWorkGroupSizes that
// the device allows (maxWorkGroup; 0 when unknown), and, for loops the
// Atomics scheme applies to, each with every scheme (Warp where the
// dialect has WarpMatch). The configured way
// (opts) comes first. Names are "staged wg64", "atomics wg128", or "wg64"
// for a loop whose scheme is not a choice; ParseVariant reads them.
func Variants(d *Dialect, l *core.Loop, localMem, maxWorkGroup int, opts Options) []string {
	wg := opts.WorkGroupSize
	if wg == 0 {
		wg = DefaultWorkGroupSize
	}
	sizes := []int{wg}
	for _, n := range TunedWorkGroupSizes {
		if n != wg && (maxWorkGroup <= 0 || n <= maxWorkGroup) {
			sizes = append(sizes, n)
		}
	}
	schemes := []string{""}
	atomics := opts
	atomics.Scheme, atomics.WorkGroupSize = Atomics, wg
	if lay, err := AnalyseWith(d, l, localMem, atomics); err == nil && lay.Atomic {
		schemes = []string{"staged", "atomics"}
		if d.WarpMatch {
			schemes = append(schemes, "warp")
		}
		// The configured scheme first (Warp is Atomics without WarpMatch).
		k := slices.Index(schemes, opts.Scheme.String())
		if k < 0 {
			k = slices.Index(schemes, Atomics.String())
		}
		schemes[0], schemes[k] = schemes[k], schemes[0]
	}
	var out []string
	for _, s := range schemes {
		for _, n := range sizes {
			name := "wg" + strconv.Itoa(n)
			if s != "" {
				name = s + " " + name
			}
			out = append(out, name)
		}
	}
	return out
}

// ParseVariant reads a name Variants made: the scheme ("" when the name
// has none) and the work-group size.
func ParseVariant(name string) (scheme string, workGroupSize int, err error) {
	f := strings.Fields(name)
	if len(f) == 0 || len(f) > 2 || !strings.HasPrefix(f[len(f)-1], "wg") {
		return "", 0, fmt.Errorf("device variant %q: want [staged|atomics|warp] wg<size>", name)
	}
	n, err := strconv.Atoi(strings.TrimPrefix(f[len(f)-1], "wg"))
	if err == nil {
		err = CheckWorkGroupSize(n)
	}
	if err != nil || n == 0 {
		return "", 0, fmt.Errorf("device variant %q: bad work-group size", name)
	}
	if len(f) == 2 {
		if _, err := ParseScheme(f[0]); err != nil || f[0] == "" {
			return "", 0, fmt.Errorf("device variant %q: %v", name, err)
		}
		scheme = f[0]
	}
	return scheme, n, nil
}
