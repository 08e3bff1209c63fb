package engine

import (
	"fmt"
	"sync"

	"github.com/goop2/op2/internal/core"
)

// AddKernels are the kernels adding one Dat's values to another's (y +=
// t), by C type and dim, that op2's MixedMat.Mult sums its blocks'
// products with: one per process, made on first use. The zero value is
// ready to use.
type AddKernels struct{ m sync.Map }

// addKey names an add kernel.
type addKey struct {
	t   core.ScalarType
	dim int
}

// Get returns the kernel y += t for dim values of type t: the one kept,
// or the one declare makes from its source and name (the API's kernel).
func (a *AddKernels) Get(t core.ScalarType, dim int, declare func(source, name string) any) any {
	key := addKey{t, dim}
	if k, ok := a.m.Load(key); ok {
		return k
	}
	k := declare(fmt.Sprintf(`void goop2_mixed_add(%[1]s *y, const %[1]s *t) {
  for (int c = 0; c < %[2]d; c++) y[c] += t[c];
}`, t.CName(), dim), "goop2_mixed_add")
	k, _ = a.m.LoadOrStore(key, k)
	return k
}

// Products are a mixed matrix's product vectors, one per row block
// (D the API's Dat), made on first use and kept. The zero value is
// ready to use.
type Products[D comparable] struct {
	mu sync.Mutex
	d  []D
}

// Get returns row block i's of n blocks: the one kept, or the one
// declare makes.
func (p *Products[D]) Get(i, n int, declare func() (D, error)) (D, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d == nil {
		p.d = make([]D, n)
	}
	var none D
	if p.d[i] == none {
		d, err := declare()
		if err != nil {
			return none, err
		}
		p.d[i] = d
	}
	return p.d[i], nil
}
