package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

func TestKernelParseOnce(t *testing.T) {
	wrapped := errors.New("wrapped")
	tests := []struct {
		name, source, fn string
		wantErr          string // "" for a kernel that reads
	}{
		{"good", "void f(double *x) { *x += 1; }", "f", ""},
		{"not an identifier", "void f(double *x) { }", "f-g", `kernel name "f-g" is not a C identifier`},
		{"missing function", "void f(double *x) { }", "g", `kernel "g": `},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := &Kernel{Kernel: core.Kernel{Name: tc.fn, Source: tc.source}}
			calls := 0
			var inner error
			wrap := func(err error) error { calls++; inner = err; return errors.Join(wrapped, err) }
			info, err := k.Parse(wrap)
			info2, err2 := k.Parse(wrap)
			if info != info2 || err != err2 || calls > 1 {
				t.Fatalf("second Parse differs from the first or wrapped again (%d wraps)", calls)
			}
			if tc.wantErr == "" {
				if err != nil || info == nil || k.Info != info || k.Source != info.Source {
					t.Fatalf("Parse = %v, %v; want the kernel read and kept", info, err)
				}
				if got := k.UsedConsts(NewConsts()); got == nil || len(got) != 0 {
					t.Errorf("UsedConsts = %#v, want an empty non-nil list", got)
				}
				return
			}
			if !errors.Is(err, wrapped) || inner == nil || !strings.HasPrefix(inner.Error(), tc.wantErr) {
				t.Fatalf("Parse error %v (before wrap %v), want one starting %q, through wrap", err, inner, tc.wantErr)
			}
		})
	}
}
