package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

func TestAddKernelsMadeOncePerTypeAndDim(t *testing.T) {
	var a AddKernels
	made := 0
	declare := func(source, name string) any { made++; return name + "\n" + source }
	k1 := a.Get(core.Float64, 2, declare).(string)
	if !strings.HasPrefix(k1, "goop2_mixed_add\nvoid goop2_mixed_add(double *y, const double *t)") || !strings.Contains(k1, "c < 2;") {
		t.Fatalf("kernel for double dim 2:\n%s", k1)
	}
	if k := a.Get(core.Float64, 2, declare); k != k1 || made != 1 {
		t.Fatalf("the same type and dim made %d kernels, want 1 kept", made)
	}
	for _, c := range []struct {
		t   core.ScalarType
		dim int
	}{{core.Float32, 2}, {core.Float64, 3}} {
		if k := a.Get(c.t, c.dim, declare).(string); k == k1 {
			t.Errorf("%v dim %d shares double dim 2's kernel", c.t, c.dim)
		}
	}
	if made != 3 {
		t.Errorf("made %d kernels, want 3", made)
	}
}

func TestProductsMadeOnFirstUse(t *testing.T) {
	var p Products[*int]
	made := 0
	declare := func() (*int, error) { made++; v := made; return &v, nil }
	d1, err := p.Get(1, 3, declare)
	if err != nil || *d1 != 1 {
		t.Fatalf("Get(1) = %v, %v", d1, err)
	}
	if d, _ := p.Get(1, 3, declare); d != d1 || made != 1 {
		t.Fatalf("Get(1) again made a new product (%d made)", made)
	}
	fail := errors.New("no room")
	if d, err := p.Get(2, 3, func() (*int, error) { return nil, fail }); d != nil || err != fail {
		t.Fatalf("a failed declaration: Get = %v, %v", d, err)
	}
	if d, err := p.Get(2, 3, declare); err != nil || d == nil || *d != 2 {
		t.Fatalf("after a failure Get(2) = %v, %v; want a new product", d, err)
	}
}
