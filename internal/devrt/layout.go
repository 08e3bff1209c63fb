package devrt

import (
	"errors"
	"fmt"

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
