package op2_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// A way of passing the Dat x in the conflict tests.
type argVariant struct {
	kind string // "D" direct, "M0"/"M1" through column 0/1 of m, "V" all of m, "N0" through column 0 of m2
	acc  op2.Access
}

func (v argVariant) String() string { return v.kind + "-" + v.acc.String() }

// mapOf is the map a variant goes through ("" for direct).
func (v argVariant) mapOf() string {
	switch v.kind {
	case "D":
		return ""
	case "N0":
		return "m2"
	}
	return "m"
}

// conflictRule is ParLoop's documented rule for two arguments passing one Dat.
func conflictRule(a, b argVariant) bool {
	switch {
	case a.acc == op2.Read && b.acc == op2.Read:
		return true // reads never conflict
	case a.acc == op2.Read || b.acc == op2.Read:
		return false // a read beside a modification
	case (a.kind == "D") != (b.kind == "D"):
		return false // direct beside through a map
	case (a.acc == op2.Inc) != (b.acc == op2.Inc):
		return false // INC beside WRITE/RW
	case a.acc == op2.Inc:
		return true // increments, all direct or all through maps
	case a.kind == "D":
		return false // WRITE/RW directly twice
	}
	// WRITE/RW through maps: only the same column of the same map, or
	// the whole of the same map, twice.
	return a.kind == b.kind
}

// values are the C lvalues of the variant's data in a kernel parameter p.
func (v argVariant) values(p string) []string {
	if v.kind == "V" {
		return []string{p + "[0][0]", p + "[1][0]"}
	}
	return []string{"(*" + p + ")"}
}

// conflictKernel uses each argument as its access allows: READ adds the
// values to s, WRITE stores 7, RW raises the value to at least 7, INC adds 1;
// out gets s. Every allowed combination then gives a result independent of
// the order of the elements.
func conflictKernel(name string, vs ...argVariant) *op2.Kernel {
	return conflictKernelWith(name, false, vs...)
}

// conflictHelpers are the helper functions of conflictKernelWith's kernels.
const conflictHelpers = `static int get1(const int *q) { return *q; }
static void set7(int *q) { *q = 7; }
static void max7(int *q) { if (*q < 7) *q = 7; }
static void inc1(int *q) { *q += 1; }
`

// conflictKernelWith is conflictKernel whose kernel, with helpers, does
// everything through helper functions that take the arguments' pointers
// (which makes the opencl backend pass private copies).
func conflictKernelWith(name string, helpers bool, vs ...argVariant) *op2.Kernel {
	var params []string
	var body strings.Builder
	body.WriteString("  int s = 0;\n")
	for i, v := range vs {
		p := fmt.Sprintf("p%d", i)
		if v.kind == "V" {
			params = append(params, "int **"+p)
		} else {
			params = append(params, "int *"+p)
		}
		for _, e := range v.values(p) {
			if helpers {
				ptr := strings.TrimSuffix(strings.TrimPrefix(e, "(*"), ")")
				if v.kind == "V" {
					ptr = strings.TrimSuffix(e, "[0]")
				}
				switch v.acc {
				case op2.Read:
					fmt.Fprintf(&body, "  s += get1(%s);\n", ptr)
				case op2.Write:
					fmt.Fprintf(&body, "  set7(%s);\n", ptr)
				case op2.RW:
					fmt.Fprintf(&body, "  max7(%s);\n", ptr)
				case op2.Inc:
					fmt.Fprintf(&body, "  inc1(%s);\n", ptr)
				}
				continue
			}
			switch v.acc {
			case op2.Read:
				fmt.Fprintf(&body, "  s += %s;\n", e)
			case op2.Write:
				fmt.Fprintf(&body, "  %s = 7;\n", e)
			case op2.RW:
				fmt.Fprintf(&body, "  if (%s < 7) %s = 7;\n", e, e)
			case op2.Inc:
				fmt.Fprintf(&body, "  %s += 1;\n", e)
			}
		}
	}
	params = append(params, "int *out")
	src := fmt.Sprintf("void %s(%s)\n{\n%s  *out = s;\n}\n", name, strings.Join(params, ", "), body.String())
	if helpers {
		src = conflictHelpers + src
	}
	return op2.NewKernel(src, name)
}

// conflictMesh is one set with a Dat x and two maps from the set to itself.
type conflictMesh struct {
	set    *op2.Set
	m, m2  *op2.Map
	x, out *op2.Dat[int32]
}

func newConflictMesh() *conflictMesh {
	const n = 1500 // several blocks and threads
	c := &conflictMesh{set: must(op2.NewSet(n, "s"))}
	mv, m2v, xv := make([]int32, 2*n), make([]int32, n), make([]int32, n)
	for e := 0; e < n; e++ {
		mv[2*e], mv[2*e+1] = int32((7*e+1)%n), int32((13*e+5)%n)
		m2v[e] = int32((3*e + 2) % n)
		xv[e] = int32(e % 17)
	}
	c.m = must(op2.NewMap(c.set, c.set, 2, mv, "m"))
	c.m2 = must(op2.NewMap(c.set, c.set, 1, m2v, "m2"))
	c.x = must(op2.NewDat(c.set, 1, xv, "x"))
	c.out = must(op2.NewDat[int32](c.set, 1, nil, "out"))
	return c
}

func (c *conflictMesh) arg(v argVariant) op2.Arg {
	switch v.kind {
	case "D":
		return c.x.Arg(v.acc)
	case "M0":
		return c.x.ArgMap(v.acc, c.m, 0)
	case "M1":
		return c.x.ArgMap(v.acc, c.m, 1)
	case "V":
		return c.x.ArgVec(v.acc, c.m)
	}
	return c.x.ArgMap(v.acc, c.m2, 0)
}

func allVariants() []argVariant {
	var vs []argVariant
	for _, k := range []string{"D", "M0", "M1", "V", "N0"} {
		for _, a := range []op2.Access{op2.Read, op2.Write, op2.RW, op2.Inc} {
			vs = append(vs, argVariant{k, a})
		}
	}
	return vs
}

// TestConflictingDatAccess checks every pair of ways of passing one Dat
// twice: the loop is accepted or refused as ParLoop's rule says (refusals
// name both arguments), and every accepted pair gives the same result on
// every backend as on sequential.
func TestConflictingDatAccess(t *testing.T) {
	vs := allVariants()
	c := newConflictMesh()
	type pair struct{ a, b argVariant }
	var accepted []pair
	for i, a := range vs {
		for j, b := range vs {
			k := conflictKernel(fmt.Sprintf("cf_%d_%d", i, j), a, b)
			_, err := op2.NewLoop(k, c.set, c.arg(a), c.arg(b), c.out.Arg(op2.Write))
			want := conflictRule(a, b)
			switch {
			case want && err != nil:
				t.Errorf("%v + %v: refused, want accepted: %v", a, b, err)
			case !want && err == nil:
				t.Errorf("%v + %v: accepted, want refused", a, b)
			case !want:
				var le *op2.LoopError
				if !errors.As(err, &le) || le.Arg != 1 {
					t.Errorf("%v + %v: error %v, want a *LoopError about argument 1", a, b, err)
				}
				wantErr(t, err, "argument 0", "argument 1", `dat "x"`, a.acc.String(), b.acc.String())
			case i <= j:
				accepted = append(accepted, pair{a, b})
			}
		}
	}
	if testing.Short() {
		accepted = accepted[:len(accepted)/4]
	}
	results := map[string][]int32{}
	onEachBackend(t, func(t *testing.T) {
		for n, p := range accepted {
			for _, helpers := range []bool{false, true} {
				// Through helper functions, only the pairs that modify
				// twice: there aliasing decides the result.
				if helpers && (p.a.acc == op2.Read || p.b.acc == op2.Read) {
					continue
				}
				c := newConflictMesh()
				k := conflictKernelWith(fmt.Sprintf("cf_run_%d_%v", n, helpers), helpers, p.a, p.b)
				name := p.a.String() + "+" + p.b.String()
				err := op2.ParLoop(k, c.set, c.arg(p.a), c.arg(p.b), c.out.Arg(op2.Write))
				check(t, err)
				got := append(append([]int32(nil), c.x.Data()...), c.out.Data()...)
				want, ok := results[name]
				if !ok {
					results[name] = got
					continue
				}
				for i := range want {
					if got[i] != want[i] {
						t.Errorf("%s (helpers %v): value %d is %d, %d on sequential", name, helpers, i, got[i], want[i])
						break
					}
				}
			}
		}
	})
}

// TestConflictingGlobalAccess: a Global may be read any number of times
// and used for one kind of reduction any number of times, together; two
// kinds of reduction are refused. Accepted pairs agree on every backend.
func TestConflictingGlobalAccess(t *testing.T) {
	accs := []op2.Access{op2.Read, op2.Inc, op2.Min, op2.Max}
	kernel := func(name string, a, b op2.Access) *op2.Kernel {
		var body strings.Builder
		for i, acc := range []op2.Access{a, b} {
			g := fmt.Sprintf("g%d[0]", i)
			switch acc {
			case op2.Read:
				fmt.Fprintf(&body, "  s += %s;\n", g)
			case op2.Inc:
				fmt.Fprintf(&body, "  %s += *x;\n", g)
			case op2.Min:
				fmt.Fprintf(&body, "  if (*x < %s) %s = *x;\n", g, g)
			case op2.Max:
				fmt.Fprintf(&body, "  if (*x > %s) %s = *x;\n", g, g)
			}
		}
		return op2.NewKernel(fmt.Sprintf("void %s(int *x, int *g0, int *g1, int *out)\n{\n  int s = 0;\n%s  *out = s + *x;\n}\n", name, body.String()), name)
	}
	const n = 1500
	type pair struct{ a, b op2.Access }
	var accepted []pair
	set := must(op2.NewSet(n, "s"))
	x := must(op2.NewDat(set, 1, iota32[int32](n), "x"))
	out := must(op2.NewDat[int32](set, 1, nil, "out"))
	for i, a := range accs {
		for j, b := range accs {
			g := must(op2.NewGlobal(1, []int32{5}, "g"))
			_, err := op2.NewLoop(kernel(fmt.Sprintf("cg_%d_%d", i, j), a, b), set, x.Arg(op2.Read), g.Arg(a), g.Arg(b), out.Arg(op2.Write))
			want := a == op2.Read || b == op2.Read || a == b
			switch {
			case want && err != nil:
				t.Errorf("%v + %v: refused, want accepted: %v", a, b, err)
			case !want && err == nil:
				t.Errorf("%v + %v: accepted, want refused", a, b)
			case !want:
				wantErr(t, err, "argument 1", "argument 2", `global "g"`)
			case i <= j:
				accepted = append(accepted, pair{a, b})
			}
		}
	}
	results := map[string][]int32{}
	onEachBackend(t, func(t *testing.T) {
		for n, p := range accepted {
			g := must(op2.NewGlobal(1, []int32{5}, "g"))
			check(t, op2.ParLoop(kernel(fmt.Sprintf("cg_run_%d", n), p.a, p.b), set, x.Arg(op2.Read), g.Arg(p.a), g.Arg(p.b), out.Arg(op2.Write)))
			got := append(append([]int32(nil), g.Data()...), out.Data()...)
			name := p.a.String() + "+" + p.b.String()
			want, ok := results[name]
			if !ok {
				results[name] = got
				continue
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%s: value %d is %d, %d on sequential", name, i, got[i], want[i])
					break
				}
			}
		}
	})
}

// targets are the elements of x that variant v reaches from element e of
// the conflict mesh.
func (v argVariant) targets(e, n int) []int {
	m0, m1 := (7*e+1)%n, (13*e+5)%n
	switch v.kind {
	case "D":
		return []int{e}
	case "M0":
		return []int{m0}
	case "M1":
		return []int{m1}
	case "V":
		return []int{m0, m1}
	}
	return []int{(3*e + 2) % n}
}

// TestWriteThroughMapColumns: a Dat written (WRITE or RW) through a map
// may be passed again only through the same column of the same map, or as
// the same whole-map vector argument; two columns, a column and the whole
// map, or two maps are refused with a LoopError naming both arguments and
// the rule, on every backend. Accepted loops give the values a sequential
// run over the elements gives.
func TestWriteThroughMapColumns(t *testing.T) {
	v := func(kind string, acc op2.Access) argVariant { return argVariant{kind, acc} }
	W, RW, Inc := op2.Write, op2.RW, op2.Inc
	cases := []struct {
		vs    []argVariant
		bad   int    // refused argument, -1 when accepted
		other int    // the earlier argument it conflicts with
		words string // what the message says about the columns
	}{
		{[]argVariant{v("M0", W), v("M0", W)}, -1, 0, ""},
		{[]argVariant{v("M1", RW), v("M1", W)}, -1, 0, ""},
		{[]argVariant{v("M0", RW), v("M0", RW), v("M0", W)}, -1, 0, ""},
		{[]argVariant{v("V", W), v("V", RW)}, -1, 0, ""},
		{[]argVariant{v("V", RW), v("V", RW)}, -1, 0, ""},
		{[]argVariant{v("M0", Inc), v("M1", Inc), v("V", Inc)}, -1, 0, ""}, // increments commute
		{[]argVariant{v("M0", W), v("M1", W)}, 1, 0, "column 0 and column 1"},
		{[]argVariant{v("M1", RW), v("M0", RW)}, 1, 0, "column 1 and column 0"},
		{[]argVariant{v("M0", W), v("M1", RW)}, 1, 0, "column 0 and column 1"},
		{[]argVariant{v("M0", W), v("V", W)}, 1, 0, "column 0 and all columns"},
		{[]argVariant{v("V", RW), v("M1", W)}, 1, 0, "all columns and column 1"},
		{[]argVariant{v("M0", W), v("N0", W)}, 1, 0, `map "m2"`},
		{[]argVariant{v("M0", W), v("M0", W), v("M1", W)}, 2, 0, "column 0 and column 1"},
		{[]argVariant{v("M1", W), v("V", RW), v("V", RW)}, 1, 0, "column 1 and all columns"},
	}
	onEachBackend(t, func(t *testing.T) {
		for ci, tc := range cases {
			name := fmt.Sprint(tc.vs)
			c := newConflictMesh()
			n := c.set.Size()
			want := append([]int32(nil), c.x.Data()...)
			args := []op2.Arg{}
			for _, a := range tc.vs {
				args = append(args, c.arg(a))
			}
			args = append(args, c.out.Arg(op2.Write))
			err := op2.ParLoop(conflictKernel(fmt.Sprintf("wmc_%d", ci), tc.vs...), c.set, args...)
			if tc.bad >= 0 {
				var le *op2.LoopError
				if !errors.As(err, &le) || le.Arg != tc.bad {
					t.Errorf("%s: error %v, want a *LoopError about argument %d", name, err, tc.bad)
					continue
				}
				wantErr(t, err, fmt.Sprintf("argument %d", tc.bad), fmt.Sprintf("argument %d", tc.other), `dat "x"`,
					"may be passed again only through the same map and the same column, or as the same whole-map (ArgVec) argument",
					tc.words, `map "`+tc.vs[tc.bad].mapOf()+`"`)
				if got := c.x.Data(); !slices.Equal(got, want) {
					t.Errorf("%s: a refused loop changed x", name)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: refused: %v", name, err)
				continue
			}
			// The element order a sequential run follows.
			for e := 0; e < n; e++ {
				for _, a := range tc.vs {
					for _, g := range a.targets(e, n) {
						switch a.acc {
						case op2.Write:
							want[g] = 7
						case op2.RW:
							want[g] = max(want[g], 7)
						case op2.Inc:
							want[g]++
						}
					}
				}
			}
			if got := c.x.Data(); !slices.Equal(got, want) {
				t.Errorf("%s: x differs from a sequential run over the elements", name)
			}
		}
	})
}

// TestVectorEntriesReachingOneElement: a vector argument (ArgVec) that
// modifies a Dat (RW, WRITE) through a map whose rows name one element
// more than once: its entries are pointers to the same values, as on the
// host, on every backend, scheme and device layout, whether the kernel
// uses the parameter as a value (tests it, passes it to a helper), which
// gives the argument a private copy on a device, or only indexes it. A
// device used to give each entry its own copy and write them back in
// turn, losing all but the last entry's update.
func TestVectorEntriesReachingOneElement(t *testing.T) {
	const nodes, edges = 7, 40
	rng := rand.New(rand.NewPCG(3, 9))
	table := make([]int32, 3*edges)
	for e := range edges {
		a := int32(rng.IntN(nodes))
		table[3*e], table[3*e+1], table[3*e+2] = a, int32(rng.IntN(nodes)), a // entries 0 and 2 always meet
	}
	kernels := map[string]string{
		"indexed": `void vec_one(double **p) { for (int j = 0; j < 3; j++) { p[j][0] += 1; p[j][1] = p[j][1] * 2 + 1; } }`,
		"tested":  `void vec_one(double **p) { if (p) for (int j = 0; j < 3; j++) { p[j][0] += 1; p[j][1] = p[j][1] * 2 + 1; } }`,
		"helper": `static void bump(double **q) { for (int j = 0; j < 3; j++) { q[j][0] += 1; q[j][1] = q[j][1] * 2 + 1; } }
void vec_one(double **p) { bump(p); }`,
	}
	configs := []op2.Config{
		{Backend: "sequential"}, // first: the reference
		{Backend: "openmp", Threads: 2, OpenMPScheme: "colour", BlockSize: 4},
		{Backend: "openmp", Threads: 2, OpenMPScheme: "owner", BlockSize: 8},
	}
	for _, b := range allBackends {
		if b == "opencl" || b == "cuda" {
			configs = append(configs,
				op2.Config{Backend: b, DeviceScheme: "staged", DeviceLayout: "aos", BlockSize: 8},
				op2.Config{Backend: b, DeviceScheme: "staged", DeviceLayout: "soa"},
				op2.Config{Backend: b, DeviceScheme: "atomics", DeviceLayout: "soa", DeviceWorkGroupSize: 32})
		}
	}
	var want []float64
	for _, name := range []string{"indexed", "tested", "helper"} {
		for _, cfg := range configs {
			t.Run(fmt.Sprintf("%s/%s-%s-%s", name, cfg.Backend, cfg.DeviceScheme+cfg.OpenMPScheme, cfg.DeviceLayout), func(t *testing.T) {
				r := must(op2.NewRuntime(cfg))
				defer r.Close()
				n := must(op2.NewSet(nodes, "nodes"))
				e := must(op2.NewSet(edges, "edges"))
				m := must(op2.NewMap(e, n, 3, table, "e2n"))
				d := must(op2.NewDat(n, 2, make([]float64, 2*nodes), "d"))
				check(t, r.ParLoop(op2.NewKernel(kernels[name], "vec_one"), e, d.ArgVec(op2.RW, m)))
				got := d.DataRO()
				if want == nil {
					want = got
					return
				}
				if !slices.Equal(got, want) {
					t.Errorf("%v, want the host's %v", got, want)
				}
			})
		}
	}
}

// TestExtrudedVectorEntries: the entries of an extruded vector argument
// (ArgExtVec) reach different nodes and layers, which a device must keep
// apart when it gives the argument a private copy: on columns short
// enough to be staged and tall enough to stay in global memory (20 000
// layers), stored by element (aos) and component by component (soa, the
// GPU default, where a layer's values are a stride apart), for RW and
// READ. A device once took entry 2 (node c, layer L+1) for entry 1 (node
// c+1, layer L) in soa global memory.
func TestExtrudedVectorEntries(t *testing.T) {
	const cellsN, nodesN = 5, 6
	var tab []int32
	for c := range cellsN {
		tab = append(tab, int32(c), int32(c+1), int32(c), int32(c+1))
	}
	configs := []op2.Config{{Backend: "sequential"}} // first: the reference
	for _, b := range allBackends {
		if b == "opencl" || b == "cuda" {
			configs = append(configs, op2.Config{Backend: b, DeviceLayout: "aos"}, op2.Config{Backend: b, DeviceLayout: "soa"})
		}
	}
	for _, layers := range []int{3, 20000} {
		for _, access := range []string{"RW", "READ"} {
			var want []float64
			for _, cfg := range configs {
				t.Run(fmt.Sprintf("%d-layers/%s/%s-%s", layers, access, cfg.Backend, cfg.DeviceLayout), func(t *testing.T) {
					r := must(op2.NewRuntime(cfg))
					defer r.Close()
					cells := must(op2.NewSet(cellsN, "cells"))
					nodes := must(op2.NewSet(nodesN, "nodes"))
					cn := must(op2.NewMap(cells, nodes, 4, tab, "cn"))
					prisms := must(op2.NewExtrudedSet(cells, layers-1, "prisms"))
					cols := must(op2.NewExtrudedSet(nodes, layers, "cols"))
					pc := must(op2.NewExtrudedMap(prisms, cols, cn, []int{0, 0, 1, 1}, []int{1, 1, 1, 1}, "pc"))
					init := make([]float64, nodesN*layers)
					for i := range init {
						init[i] = float64(i % 97)
					}
					d := must(op2.NewExtrudedDat(cols, 1, init, "d"))
					o := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "o"))
					if access == "RW" {
						check(t, r.ParLoop(op2.NewKernel(`void xv_rw(double **p) { if (p) for (int j = 0; j < 4; j++) p[j][0] += j + 1; }`, "xv_rw"), prisms, d.ArgExtVec(op2.RW, pc)))
					} else {
						check(t, r.ParLoop(op2.NewKernel(`void xv_r(const double **p, double *o) { if (p) *o = p[0][0] + 100 * p[1][0] + 1e4 * p[2][0] + 1e6 * p[3][0]; }`, "xv_r"),
							prisms, d.ArgExtVec(op2.Read, pc), o.Arg(op2.Write)))
					}
					got := append(d.DataRO(), o.DataRO()...)
					if want == nil {
						want = got
						return
					}
					if !slices.Equal(got, want) {
						t.Errorf("differs from the host's")
					}
				})
			}
		}
	}
}
