package dist

import "github.com/goop2/op2/internal/core"

// DeclaredNumbers is the declared (global) number of each local element
// of s, or nil when that is the element's own number.
func DeclaredNumbers(s *core.Set) []int32 {
	if h, ok := s.Halo.(*SetHalo); ok {
		return h.Global
	}
	return s.Declared
}

// ToDeclared returns the owned elements' values of a renumbered set's
// storage in the declared numbering.
func ToDeclared[T any](vals []T, dim int, decl []int32) []T {
	out := make([]T, len(decl)*dim)
	for i, g := range decl {
		copy(out[int(g)*dim:(int(g)+1)*dim], vals[i*dim:(i+1)*dim])
	}
	return out
}
