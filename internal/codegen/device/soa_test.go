package device

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
)

// TestAoSNeeded: with the soa layout, a loop that cannot read some data
// structure-of-arrays is not refused: AnalyseWith names that data in an
// *AoSNeeded, and once it is stored element by element
// (core.Storage.KeepAoSOnDevice) the loop analyses, reads it without
// strides, and has another key. Data every loop can read stays SoA.
func TestAoSNeeded(t *testing.T) {
	const read = "void k(const double *a, const double *b) {}"
	const write2 = "void k(double *a, double *b) { a[0] += b[1]; b[0] = a[1]; }"
	tests := []struct {
		name     string
		localMem int // 0: 48 KiB
		scheme   Scheme
		src      string
		args     func(tl *testLoop, x, y *core.Storage) []core.Arg
		dimX     int
		want     string // in the AoSNeeded's reason; "" for none
	}{
		{"small", 0, Atomics, read, func(tl *testLoop, x, y *core.Storage) []core.Arg {
			return []core.Arg{{Data: x, Access: core.Read, Kind: core.ArgDirect}, {Data: y, Map: tl.m, Idx: -2, Access: core.Read, Kind: core.ArgVector}}
		}, 4, ""},
		{"direct above 1 KiB", 0, Atomics, read, func(tl *testLoop, x, y *core.Storage) []core.Arg {
			return []core.Arg{{Data: x, Access: core.Read, Kind: core.ArgDirect}, {Data: y, Map: tl.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect}}
		}, 130, "1040 bytes per element"},
		{"vector above 1 KiB", 0, Atomics, read, func(tl *testLoop, x, y *core.Storage) []core.Arg {
			return []core.Arg{{Data: y, Access: core.Read, Kind: core.ArgDirect}, {Data: x, Map: tl.m, Idx: -2, Access: core.Read, Kind: core.ArgVector}}
		}, 80, "1280 bytes per element"},
		{"writes that must meet", 1100, Staged, write2, func(tl *testLoop, x, y *core.Storage) []core.Arg {
			return []core.Arg{{Data: x, Map: tl.m, Idx: 0, Access: core.RW, Kind: core.ArgIndirect}, {Data: x, Map: tl.m, Idx: 1, Access: core.RW, Kind: core.ArgIndirect}}
		}, 8, "must see each other's writes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTestLoop()
			x, y := tl.dat("x", tc.dimX, tl.nodes), tl.dat("y", 3, tl.nodes)
			set := tl.edges
			if tc.args(tl, x, y)[0].Kind == core.ArgDirect {
				set = tl.nodes
			}
			l := loop(t, tc.src, "k", set, nil, tc.args(tl, x, y)...)
			localMem := tc.localMem
			if localMem == 0 {
				localMem = 48 << 10
			}
			opts := Options{Scheme: tc.scheme, SoA: true}
			keyBefore := core.AppendKey(nil, l)
			lay, err := AnalyseWith(OpenCL, l, localMem, opts)
			var need *AoSNeeded
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				if !lay.SoAData(l, 0) || !lay.SoAData(l, 1) {
					t.Errorf("data of dim > 1 not stored structure-of-arrays")
				}
				return
			}
			if !errors.As(err, &need) {
				t.Fatalf("got %v, want an *AoSNeeded", err)
			}
			if len(need.Data) != 1 || need.Data[0] != x || !strings.Contains(need.Why[0], tc.want) || !strings.Contains(err.Error(), "x") {
				t.Fatalf("AoSNeeded %v names %v, want x: %q", err, need.Data, tc.want)
			}
			if err := x.KeepAoSOnDevice(); err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(core.AppendKey(nil, l), keyBefore) {
				t.Errorf("the key does not change when x is stored element by element")
			}
			lay, err = AnalyseWith(OpenCL, l, localMem, opts)
			if err != nil {
				t.Fatal(err)
			}
			for i, a := range l.Args {
				if got, want := lay.SoAData(l, i), a.Data == y; got != want {
					t.Errorf("argument %d (%s): SoAData %v, want %v", i, a.Data.Name, got, want)
				}
			}
			if _, err := Generate(l, lay); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestParseLayout: the default layout is soa on a GPU and aos elsewhere;
// a named one is what it says.
func TestParseLayout(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpu  bool
		soa  bool
	}{{"", true, true}, {"", false, false}, {"aos", true, false}, {"soa", false, true}} {
		soa, err := ParseLayout(tc.name, tc.gpu)
		if err != nil || soa != tc.soa {
			t.Errorf("ParseLayout(%q, gpu %v) = %v, %v; want %v", tc.name, tc.gpu, soa, err, tc.soa)
		}
	}
	if err := CheckLayout("columns"); err == nil || !strings.Contains(err.Error(), `unknown device layout "columns"`) {
		t.Errorf("CheckLayout(columns) = %v", err)
	}
}
