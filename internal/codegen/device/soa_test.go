package device

import (
	"bytes"
	"errors"
	"slices"
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

// TestPlanFree: a loop the atomics scheme runs is generated without a plan
// (a direct loop's range, map tables read directly, one per map), in both
// layouts; a loop that must stage keeps the plan.
func TestPlanFree(t *testing.T) {
	const inc = "void k(const double *x, const double *y, double *r) { r[0] += x[0] + y[1]; }"
	const rw = "void k(const double *x, const double *y, double *r) { r[0] = x[0] + y[1]; }"
	for _, tc := range []struct {
		name   string
		src    string
		acc    core.Access
		scheme Scheme
		soa    bool
		free   bool
	}{
		{"atomics", inc, core.Inc, Atomics, false, true},
		{"atomics soa", inc, core.Inc, Atomics, true, true},
		{"staged", inc, core.Inc, Staged, false, false},
		{"atomics, a write through a map", rw, core.Write, Atomics, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTestLoop()
			other := &core.Map{Name: "m2", From: tl.edges, To: tl.nodes, Arity: 2, Table: tl.m.Table, ID: core.NewID()}
			x, y, r := tl.dat("x", 2, tl.nodes), tl.dat("y", 2, tl.nodes), tl.dat("r", 1, tl.nodes)
			l := loop(t, tc.src, "k", tl.edges, nil,
				core.Arg{Data: x, Map: tl.m, Idx: 0, Access: core.Read, Kind: core.ArgIndirect},
				core.Arg{Data: y, Map: other, Idx: 1, Access: core.Read, Kind: core.ArgIndirect},
				core.Arg{Data: r, Map: tl.m, Idx: 1, Access: tc.acc, Kind: core.ArgIndirect})
			lay, err := AnalyseWith(OpenCL, l, 48<<10, Options{Scheme: tc.scheme, SoA: tc.soa})
			if err != nil {
				t.Fatal(err)
			}
			src, err := Generate(l, lay)
			if err != nil {
				t.Fatal(err)
			}
			if lay.PlanFree != tc.free {
				t.Fatalf("PlanFree %v, want %v", lay.PlanFree, tc.free)
			}
			if !tc.free {
				if !strings.Contains(src, "op2_blkmap") {
					t.Errorf("no plan in the source:\n%s", stub(src))
				}
				return
			}
			if !slices.Equal(lay.MapParam, []int{0, 1, 0}) {
				t.Errorf("MapParam %v, want [0 1 0]", lay.MapParam)
			}
			for _, want := range []string{"int op2_first, int op2_last", "op2_mt0[(size_t)(op2_e) * 2 + 0]", "op2_mt1[(size_t)(op2_e) * 2 + 1]", "op2_mt0[(size_t)(op2_e) * 2 + 1]", "op2_atomic_add"} {
				if !strings.Contains(src, want) {
					t.Errorf("no %q in the source:\n%s", want, stub(src))
				}
			}
			for _, bad := range []string{"op2_loc", "op2_blkmap", "op2_ind_map", "op2_mt2"} {
				if strings.Contains(src, bad) {
					t.Errorf("%q in the source:\n%s", bad, stub(src))
				}
			}
		})
	}
}

// TestWriteNotCopiedIn: the private copy of a WRITE argument (here read
// from structure-of-arrays memory) is not filled from the Dat, since the
// kernel writes every value and reads none (OP2 copies nothing in
// either); an RW argument's copy is, and both are copied back.
func TestWriteNotCopiedIn(t *testing.T) {
	tl := newTestLoop()
	q, qold := tl.dat("q", 4, tl.nodes), tl.dat("qold", 4, tl.nodes)
	l := loop(t, "void save(const double *q, double *qold, double *s) { for (int k = 0; k < 4; k++) { qold[k] = q[k]; s[k] += q[k]; } }", "save", tl.nodes, nil,
		core.Arg{Data: q, Access: core.Read, Kind: core.ArgDirect},
		core.Arg{Data: qold, Access: core.Write, Kind: core.ArgDirect},
		core.Arg{Data: tl.dat("s", 4, tl.nodes), Access: core.RW, Kind: core.ArgDirect})
	lay, err := AnalyseWith(OpenCL, l, 48<<10, Options{SoA: true})
	if err != nil {
		t.Fatal(err)
	}
	src, err := Generate(l, lay)
	if err != nil {
		t.Fatal(err)
	}
	src = stub(src)
	for _, want := range []string{"op2_p0[op2_k] = op2_d0[", "op2_p2[op2_k] = op2_d2[", "op2_d1[(size_t)(op2_n) + (size_t)(op2_k) * op2_stride1] = op2_p1[op2_k]"} {
		if !strings.Contains(src, want) {
			t.Errorf("no %q in the source:\n%s", want, src)
		}
	}
	if strings.Contains(src, "op2_p1[op2_k] = ") {
		t.Errorf("the WRITE argument's copy is filled from the Dat:\n%s", src)
	}
}
