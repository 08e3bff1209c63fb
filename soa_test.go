package op2_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/randkernel"
)

// TestDeviceLayoutSoA: with DeviceLayout "soa" the opencl backend stores a
// dim-3 Dat component by component on the device, kernels see the usual
// pointers, and host access (Data, Range, CopyTo) sees the values in
// element order; the results equal the sequential backend's.
func TestDeviceLayoutSoA(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	_, err := op2.NewRuntime(op2.Config{Backend: "opencl", DeviceLayout: "columns"})
	wantErr(t, err, `unknown device layout "columns"`)

	edges, nodes, m := scatteredEdges(500, 200, 53, 7)
	x0 := iota32[float64](600)
	scale := op2.NewKernel("void soa_scale(double *x, const double *w) { x[0] *= 2; x[1] += x[2] * *w; x[2] = -x[2]; }", "soa_scale")
	flux := op2.NewKernel(`void soa_flux(const double *a, const double *b, double *ra, double *rb) {
	for (int k = 0; k < 3; k++) { ra[k] += 0.5 * (b[k] - a[k]); rb[k] -= 0.25 * (b[k] - a[k]); } }`, "soa_flux")
	type result struct {
		x, r, rng, cp []float64
		src           string
	}
	run := func(backend, layout string) result {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceLayout: layout}))
		x := must(op2.NewDat(nodes, 3, x0, "x"))
		w := must(op2.NewDat(nodes, 1, iota32[float64](200), "w"))
		r := must(op2.NewDat[float64](nodes, 3, nil, "r"))
		check(t, op2.ParLoop(scale, nodes, x.Arg(op2.RW), w.Arg(op2.Read)))
		lp := must(op2.NewLoop(flux, edges, x.ArgMap(op2.Read, m, 0), x.ArgMap(op2.Read, m, 1), r.ArgMap(op2.Inc, m, 0), r.ArgMap(op2.Inc, m, 1)))
		check(t, lp.Compute())
		var res result
		res.rng = must(r.Range(10, 5)) // from the device, component by component
		cp := must(op2.NewDat[float64](nodes, 3, nil, "cp"))
		check(t, r.CopyTo(cp))
		res.cp = cp.Data()
		res.x, res.r = x.Data(), r.Data()
		res.src = must(lp.Generate())
		return res
	}
	want := run("sequential", "")
	for _, scheme := range []string{"staged", "atomics"} {
		t.Run(scheme, func(t *testing.T) {
			t.Setenv("OP2_DEVICE_SCHEME", scheme)
			got := run("opencl", "soa")
			if !strings.Contains(got.src, "op2_stride") {
				t.Errorf("no strides in the source:\n%s", got.src)
			}
			if !slices.Equal(got.x, want.x) {
				t.Errorf("x differs from sequential")
			}
			for i := range want.r {
				if d := got.r[i] - want.r[i]; d > 1e-9 || d < -1e-9 {
					t.Fatalf("r[%d] = %g, sequential %g", i, got.r[i], want.r[i])
				}
			}
			if !slices.Equal(got.rng, got.r[30:45]) || !slices.Equal(got.cp, got.r) {
				t.Errorf("Range or CopyTo on the device differ from Data: %v vs %v", got.rng, got.r[30:45])
			}
		})
	}
}

// TestDeviceLayoutPerDat: with the soa layout, a loop that cannot read a
// Dat structure-of-arrays (here a vector argument of 2 × 80 doubles, above
// the 1 KiB of a private copy) is not refused: that Dat is stored element
// by element from then on, its values carried over from its
// structure-of-arrays copy, while a Dat of the same shape that no such loop
// reads stays structure-of-arrays. Loops of the same shape on either, and
// CopyTo between them, give the sequential backend's values.
func TestDeviceLayoutPerDat(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	const dim = 80
	edges, nodes, m := scatteredEdges(300, 100, 37, 5)
	scale := op2.NewKernel("void pd_scale(double *x) { for (int k = 0; k < 80; k++) x[k] = 0.5 * x[k] + k; }", "pd_scale")
	gather := op2.NewKernel(`void pd_gather(const double **x, double *r0, double *r1) {
	for (int k = 0; k < 80; k++) { *r0 += x[1][k] - x[0][k]; *r1 += x[0][k] * 1e-3; } }`, "pd_gather")
	type result struct {
		big, twin, r, cp, cp2 []float64
		srcBig, srcTwin       string
	}
	run := func(backend string) result {
		check(t, op2.Configure(op2.Config{Backend: backend, DeviceLayout: "soa", DeviceScheme: "atomics"}))
		big := must(op2.NewDat(nodes, dim, iota32[float64](dim*100), "big"))
		twin := must(op2.NewDat(nodes, dim, iota32[float64](dim*100), "twin"))
		r := must(op2.NewDat[float64](nodes, 1, nil, "r"))
		for _, d := range []*op2.Dat[float64]{big, twin} {
			check(t, op2.ParLoop(scale, nodes, d.Arg(op2.RW)))
		}
		check(t, op2.ParLoop(gather, edges, big.ArgVec(op2.Read, m), r.ArgMap(op2.Inc, m, 0), r.ArgMap(op2.Inc, m, 1)))
		for _, d := range []*op2.Dat[float64]{big, twin} {
			check(t, op2.ParLoop(scale, nodes, d.Arg(op2.RW)))
		}
		cp := must(op2.NewDat[float64](nodes, dim, nil, "cp"))
		check(t, big.CopyTo(cp))
		cp2 := must(op2.NewDat[float64](nodes, dim, nil, "cp2"))
		check(t, twin.CopyTo(cp2))
		check(t, op2.ParLoop(scale, nodes, cp.Arg(op2.RW)))
		check(t, cp2.CopyTo(big))
		res := result{big: big.Data(), twin: twin.Data(), r: r.Data(), cp: cp.Data(), cp2: cp2.Data()}
		res.srcBig = must(must(op2.NewLoop(scale, nodes, big.Arg(op2.RW))).Generate())
		res.srcTwin = must(must(op2.NewLoop(scale, nodes, twin.Arg(op2.RW))).Generate())
		return res
	}
	want := run("sequential")
	got := run("opencl")
	if strings.Contains(got.srcBig, "op2_stride") || !strings.Contains(got.srcTwin, "op2_stride") {
		t.Errorf("the same loop on big should read it element by element, on twin structure-of-arrays:\n%s\n%s", got.srcBig, got.srcTwin)
	}
	for _, c := range []struct {
		name      string
		got, want []float64
	}{{"big", got.big, want.big}, {"twin", got.twin, want.twin}, {"cp", got.cp, want.cp}, {"cp2", got.cp2, want.cp2}} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s differs from sequential", c.name)
		}
	}
	for i := range want.r {
		if d := got.r[i] - want.r[i]; d > 1e-9 || d < -1e-9 {
			t.Fatalf("r[%d] = %g, sequential %g", i, got.r[i], want.r[i])
		}
	}
}

// TestDeviceLayoutsRandom runs random sequences of loops over a random
// mesh, whose Dats have dims from 1 to 300 and are passed directly, through
// one map column or through every column of maps of arity 2 and 4 (a
// vector of 4 × 80 ints or 300 ints directly pass more than the 1 KiB of a
// private copy): on opencl with the soa layout, in both schemes, some Dats
// end up stored element by element at random points of the sequence, one
// of them (read last as a vector of 4 × 80) after loops changed it on the
// device, and every Dat equals the sequential backend's, bit for bit (the
// kernels compute in integers, in any order alike).
func TestDeviceLayoutsRandom(t *testing.T) {
	needBackend(t, "opencl")
	defer func() { check(t, op2.Configure(op2.Config{Backend: "sequential"})) }()
	pinned := 0 // random arguments that make their Dat stored element by element
	for seed := range uint64(2) {
		rng := rand.New(rand.NewPCG(seed, 11))
		const ne, nn = 240, 90
		edges := must(op2.NewSet(ne, "edges"))
		nodes := must(op2.NewSet(nn, "nodes"))
		maps := make([]*op2.Map, 2)
		for k, arity := range []int{2, 4} {
			tab := make([]int32, arity*ne)
			for i := range tab {
				tab[i] = int32(rng.IntN(nn))
			}
			maps[k] = must(op2.NewMap(edges, nodes, arity, tab, fmt.Sprintf("m%d", arity)))
		}
		dims := []int{1, 2, 3, 5, 80, 300}
		type datSpec struct {
			dim    int
			onEdge bool
		}
		// Dat 0 is read as a vector of 4 (1280 bytes) by the last loop,
		// after loops that change it on the device, into Dat 1.
		specs := []datSpec{{80, false}, {1, false}}
		for range 6 {
			specs = append(specs, datSpec{dims[rng.IntN(len(dims))], rng.IntN(3) == 0})
		}
		type argSpec struct {
			dat, mapk, col int
			kind, access   string
		}
		type loopSpec struct {
			edges bool
			args  []argSpec
		}
		// First each Dat is changed on the device, so that a Dat stored
		// element by element later has its current values only there.
		var loops []loopSpec
		for d, s := range specs {
			loops = append(loops, loopSpec{edges: s.onEdge, args: []argSpec{{dat: d, kind: "direct", access: "RW"}}})
		}
		for range 12 {
			ls := loopSpec{edges: rng.IntN(3) > 0}
			for _, d := range rng.Perm(len(specs))[:1+rng.IntN(3)] {
				s := specs[d]
				a := argSpec{dat: d, mapk: rng.IntN(2), kind: "direct"}
				switch {
				case s.onEdge != ls.edges:
					if !ls.edges {
						continue // nodes reach no edge data
					}
					a.kind = []string{"indirect", "vector"}[rng.IntN(2)]
					a.col = rng.IntN([]int{2, 4}[a.mapk])
					a.access = []string{"Read", "Inc"}[rng.IntN(2)]
				default:
					a.access = []string{"Read", "Write", "RW"}[rng.IntN(3)]
				}
				ls.args = append(ls.args, a)
			}
			if len(ls.args) > 0 {
				loops = append(loops, ls)
			}
			for _, a := range ls.args {
				if bytes := 4 * specs[a.dat].dim; bytes > 1024 || a.kind == "vector" && bytes*[]int{2, 4}[a.mapk] > 1024 {
					pinned++
				}
			}
		}
		loops = append(loops, loopSpec{edges: true, args: []argSpec{{dat: 0, mapk: 1, kind: "vector", access: "Read"}, {dat: 1, mapk: 1, col: 2, kind: "indirect", access: "Inc"}}})
		access := map[string]op2.Access{"Read": op2.Read, "Write": op2.Write, "RW": op2.RW, "Inc": op2.Inc}
		kernels := make([]*op2.Kernel, len(loops))
		for i, ls := range loops {
			var ka []randkernel.Arg
			for _, a := range ls.args {
				ka = append(ka, randkernel.Arg{Kind: a.kind, Access: a.access, Type: "int", Dim: specs[a.dat].dim, Arity: []int{2, 4}[a.mapk]})
			}
			name := fmt.Sprintf("lr%d_%d", seed, i)
			kernels[i] = op2.NewKernel(randkernel.Source(name, ka, ""), name)
		}
		run := func(backend, scheme string) [][]int32 {
			check(t, op2.Configure(op2.Config{Backend: backend, DeviceLayout: "soa", DeviceScheme: scheme}))
			dats := make([]*op2.Dat[int32], len(specs))
			for d, s := range specs {
				set, n := nodes, nn
				if s.onEdge {
					set, n = edges, ne
				}
				vals := make([]int32, n*s.dim)
				for i := range vals {
					vals[i] = int32((i*7 + d) % 23)
				}
				dats[d] = must(op2.NewDat(set, s.dim, vals, fmt.Sprintf("d%d", d)))
			}
			for i, ls := range loops {
				set := nodes
				if ls.edges {
					set = edges
				}
				var args []op2.Arg
				for _, a := range ls.args {
					d, acc := dats[a.dat], access[a.access]
					switch a.kind {
					case "direct":
						args = append(args, d.Arg(acc))
					case "indirect":
						args = append(args, d.ArgMap(acc, maps[a.mapk], a.col))
					default:
						args = append(args, d.ArgVec(acc, maps[a.mapk]))
					}
				}
				if err := op2.ParLoop(kernels[i], set, args...); err != nil {
					t.Fatalf("seed %d, loop %d (%s): %v", seed, i, backend, err)
				}
			}
			var out [][]int32
			for _, d := range dats {
				out = append(out, slices.Clone(d.Data()))
			}
			return out
		}
		want := run("sequential", "")
		for _, scheme := range []string{"staged", "atomics"} {
			got := run("opencl", scheme)
			for d := range want {
				if !slices.Equal(got[d], want[d]) {
					t.Errorf("seed %d, %s: Dat %d (dim %d) differs from sequential", seed, scheme, d, specs[d].dim)
				}
			}
		}
	}
	if pinned == 0 {
		t.Error("no random loop passes more than 1 KiB per element: the seeds test only the last loop's change of layout")
	}
	t.Logf("%d random arguments, and each seed's last loop, made their Dat stored element by element", pinned)
}
