package engine

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// WithExecHalo returns owned, the elements a rank names for a subset of
// set s (its owned elements, checked), followed by the exec halo
// elements whose owners name them: op2's NewSubset in a distributed
// run, which each rank declares over its owned elements. what names the
// exchange in errors. Collective; caller holds the lock.
func WithExecHalo(w dist.World, s *core.Set, owned []int32, what string) ([]int32, error) {
	sh, _ := s.Halo.(*dist.SetHalo)
	flags := make([]int32, s.Total)
	for _, e := range owned {
		flags[e] = 1
	}
	if err := dist.ExchangeFlags(w, sh, flags, what); err != nil {
		return nil, err
	}
	for e := s.Owned; e < s.Exec; e++ {
		if flags[e] != 0 {
			owned = append(owned, int32(e))
		}
	}
	return owned, nil
}
