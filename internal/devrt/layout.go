package devrt

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
)

// Analyse is device.AnalyseWith for a loop about to be built or generated:
// data the loop cannot read structure-of-arrays (device.AoSNeeded) is
// stored element by element from then on (core.Storage.KeepAoSOnDevice),
// and the loop analysed again, so that the layout is chosen per Dat and no
// loop is refused for it. The loop's key changes with it (core.AppendKey).
func Analyse(d *device.Dialect, l *core.Loop, localMem int, opts device.Options) (*device.Layout, error) {
	lay, err := device.AnalyseWith(d, l, localMem, opts)
	var need *device.AoSNeeded
	if !errors.As(err, &need) {
		return lay, err
	}
	for _, s := range need.Data {
		if err := s.KeepAoSOnDevice(); err != nil {
			return nil, fmt.Errorf("%s: storing %s element by element on the device: %w", l.Name(), s.Describe(), err)
		}
	}
	return device.AnalyseWith(d, l, localMem, opts)
}

// mapCopy is a map's table on a device (core.Map.Device), which a
// device.Layout.PlanFree kernel reads.
type mapCopy struct {
	owner any
	buf   Buffer
}

// mapTable returns the device copy of m's table for backend owner, copying
// it the first time: tables do not change once a loop has used them
// (op2.Renumber comes before). The copy is freed with the map.
func mapTable(drv Driver, owner any, m *core.Map) (Buffer, error) {
	if c, ok := m.Device.(*mapCopy); ok && c.owner == owner {
		return c.buf, nil
	}
	n := len(m.Table) * 4
	buf, err := drv.Alloc(max(n, 4))
	if err != nil {
		return nil, fmt.Errorf("allocating map %q on the device: %w", m.Name, err)
	}
	if n > 0 {
		if err := drv.Write(buf, m.Ptr(), n); err != nil {
			drv.Free(buf)
			return nil, fmt.Errorf("copying map %q to the device: %w", m.Name, err)
		}
	}
	runtime.AddCleanup(m, func(b Buffer) { drv.Free(b) }, buf)
	m.Device = &mapCopy{owner: owner, buf: buf}
	return buf, nil
}
