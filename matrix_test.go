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

// elemMatKernel fills element e's element matrix with values that are
// exact in binary floating point and differ per element and entry, so
// that any assembly order gives the same bits.
const elemMatKernel = `
void elem_mat(const int *e, double *A) {
  for (int i = 0; i < NR; i++)
    for (int j = 0; j < NC; j++)
      A[i * NC + j] = (double)((*e % 7) + 1) * (double)(i * NC + j + 1) * 0.25;
}`

// randomCells declares n cells of arity nodes each, over nn nodes, with
// random distinct nodes per cell.
func randomCells(t *testing.T, rng *rand.Rand, n, nn, arity int) (*op2.Set, *op2.Set, *op2.Map, []int32) {
	cells := must(op2.NewSet(n, "cells"))
	nodes := must(op2.NewSet(nn, "nodes"))
	tab := make([]int32, 0, n*arity)
	for range n {
		for _, v := range rng.Perm(nn)[:arity] {
			tab = append(tab, int32(v))
		}
	}
	return cells, nodes, must(op2.NewMap(cells, nodes, arity, tab, "pcell")), tab
}

// denseAssembly is the matrix the elem_mat loop must assemble, computed
// in Go: rows and columns through one map, blocks of dim×dim.
func denseAssembly(tab []int32, arity, dim, nn int) [][]float64 {
	n := len(tab) / arity
	nr := arity * dim
	want := make([][]float64, nn*dim)
	for i := range want {
		want[i] = make([]float64, nn*dim)
	}
	for e := 0; e < n; e++ {
		for i := 0; i < nr; i++ {
			for j := 0; j < nr; j++ {
				v := float64(e%7+1) * float64(i*nr+j+1) * 0.25
				r := int(tab[e*arity+i/dim])*dim + i%dim
				c := int(tab[e*arity+j/dim])*dim + j%dim
				want[r][c] += v
			}
		}
	}
	return want
}

// TestMatAssembly assembles matrices from random meshes on every backend
// (sequential; openmp in both schemes and with small blocks, so that rows
// are coloured; the device backends in the staged scheme, with blocks
// small enough for several block and thread colours, and in the atomics
// scheme) and over a subset, and compares them with the assembly
// computed in Go: bit-identical, as the element values are exact.
func TestMatAssembly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	configs := []op2.Config{
		{Backend: "sequential"},
		{Backend: "openmp", Threads: 3, OpenMPScheme: "colour", BlockSize: 4, PlanCheck: true},
		{Backend: "openmp", Threads: 2, OpenMPScheme: "owner", BlockSize: 8, PlanCheck: true},
	}
	for _, b := range allBackends {
		if b == "opencl" || b == "cuda" {
			configs = append(configs,
				op2.Config{Backend: b, DeviceScheme: "staged", BlockSize: 40, PlanCheck: true},
				op2.Config{Backend: b, DeviceScheme: "atomics", DeviceLayout: "soa", DeviceWorkGroupSize: 32})
		}
	}
	for trial := range 6 {
		arity, dim := 2+trial%3, 1+trial%2
		n, nn := 20+rng.IntN(200), 5+rng.IntN(60)
		nn = max(nn, arity)
		cells, nodes, pcell, tab := randomCells(t, rng, n, nn, arity)
		sp := must(op2.NewSparsity(nodes, dim, nodes, dim, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
		nr := arity * dim
		k := op2.NewKernel(fmt.Sprintf("#define NR %d\n#define NC %d\n%s", nr, nr, elemMatKernel), "elem_mat")
		want := denseAssembly(tab, arity, dim, nn)
		for _, cfg := range configs {
			t.Run(fmt.Sprintf("trial%d/%s-%s%s", trial, cfg.Backend, cfg.OpenMPScheme, cfg.DeviceScheme), func(t *testing.T) {
				r := must(op2.NewRuntime(cfg))
				A := must(op2.NewMat[float64](sp, "A"))
				// Twice: INC adds to what is there.
				for range 2 {
					check(t, r.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
				}
				got := must(A.Dense())
				for i := range want {
					for j := range want[i] {
						if got[i][j] != 2*want[i][j] {
							t.Fatalf("A[%d][%d] = %v, want %v", i, j, got[i][j], 2*want[i][j])
						}
					}
				}
				// y = A x, exactly the dense product here.
				x := must(op2.NewDat[float64](nodes, dim, nil, "x"))
				y := must(op2.NewDat[float64](nodes, dim, nil, "y"))
				xs := x.Data()
				for i := range xs {
					xs[i] = float64(i%5) - 2
				}
				check(t, A.Mult(x, y))
				for i, row := range got {
					var s float64
					for j, v := range row {
						s += v * xs[j]
					}
					if y.DataRO()[i] != s {
						t.Fatalf("(A x)[%d] = %v, want %v", i, y.DataRO()[i], s)
					}
				}
				// Zero keeps the pattern; WRITE of one element stores.
				check(t, A.Zero())
				sub := must(op2.NewSubset(cells, []int32{int32(n / 2)}))
				check(t, r.ParLoop(k, sub, op2.ArgIdx(), A.Arg(op2.Write, pcell, pcell)))
				one := denseAssembly(tab[(n/2)*arity:(n/2+1)*arity], arity, dim, nn)
				got = must(A.Dense())
				e := n / 2
				for i := range one {
					for j := range one[i] {
						// denseAssembly numbered the one element 0.
						w := one[i][j] / float64(0%7+1) * float64(e%7+1)
						if got[i][j] != w {
							t.Fatalf("after WRITE of element %d: A[%d][%d] = %v, want %v", e, i, j, got[i][j], w)
						}
					}
				}
			})
		}
	}
}

// TestMatRectangular assembles a matrix whose rows and columns are
// different sets with different dims, from two map pairs, in float32.
func TestMatRectangular(t *testing.T) {
	cells := must(op2.NewSet(3, "cells"))
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(2, "edges"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "pcell"))
	cedge := must(op2.NewMap(cells, edges, 1, []int32{0, 1, 1}, "cedge"))
	pcell2 := must(op2.NewMap(cells, nodes, 1, []int32{3, 0, 2}, "pcell2"))
	// rows: nodes (dim 2); columns: edges (dim 3).
	sp := must(op2.NewSparsity(nodes, 2, edges, 3, []op2.MapPair{{Row: pcell, Col: cedge}, {Row: pcell2, Col: cedge}}, "rect"))
	if r, c := sp.Shape(); r != 8 || c != 6 {
		t.Fatalf("shape %d×%d", r, c)
	}
	A := must(op2.NewMat[float32](sp, "B"))
	for _, pair := range []struct {
		row *op2.Map
		nr  int
	}{{pcell, 4}, {pcell2, 2}} {
		k := op2.NewKernel(fmt.Sprintf("#define NR %d\n", pair.nr)+`void fill(const int *e, float *A) { for (int i = 0; i < NR * 3; i++) A[i] = (float)(*e + 1) * (float)(i + 1); }`, "fill")
		check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pair.row, cedge)))
	}
	want := make([][]float32, 8)
	for i := range want {
		want[i] = make([]float32, 6)
	}
	add := func(rows []int32, ra int, cols []int32) {
		for e := 0; e < 3; e++ {
			for i := 0; i < ra*2; i++ {
				for j := 0; j < 3; j++ {
					want[int(rows[e*ra+i/2])*2+i%2][int(cols[e])*3+j] += float32(e+1) * float32(i*3+j+1)
				}
			}
		}
	}
	add([]int32{0, 1, 1, 2, 2, 3}, 2, []int32{0, 1, 1})
	add([]int32{3, 0, 2}, 1, []int32{0, 1, 1})
	got := must(A.Dense())
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("row %d: %v, want %v", i, got[i], want[i])
		}
	}
	rowptr, colidx, vals, err := A.Values()
	check(t, err)
	if len(vals) != sp.NNZ() || len(colidx) != sp.NNZ() || len(rowptr) != 9 {
		t.Fatalf("Values: %d values, %d columns, %d row offsets for %d nonzeros", len(vals), len(colidx), len(rowptr), sp.NNZ())
	}
	for r := 0; r < 8; r++ {
		for k := rowptr[r]; k < rowptr[r+1]; k++ {
			if vals[k] != want[r][colidx[k]] {
				t.Fatalf("Values: (%d, %d) = %v, want %v", r, colidx[k], vals[k], want[r][colidx[k]])
			}
		}
	}
	if err := A.ZeroRows([]int{0}, 1); err == nil || !strings.Contains(err.Error(), "square") {
		t.Fatalf("ZeroRows of a rectangular matrix: %v", err)
	}
}

// TestMatZeroRows puts Dirichlet rows into an assembled matrix, keeping
// the pattern and giving the diagonal, also where no element reached it.
func TestMatZeroRows(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(4, "nodes")) // node 3 is in no cell
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	sp := must(op2.NewSparsity(nodes, 2, nodes, 2, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := op2.NewKernel(`void ones(double *A) { for (int i = 0; i < 16; i++) A[i] = 1; }`, "ones")
	check(t, op2.ParLoop(k, cells, A.Arg(op2.Inc, pcell, pcell)))
	check(t, A.ZeroRows([]int{1, 3}, 5))
	got := must(A.Dense())
	for i, row := range got {
		for j, v := range row {
			var want float64
			switch {
			case i/2 == 1 || i/2 == 3:
				if i == j {
					want = 5
				}
			case i/2 == 0 && j/2 <= 1, i/2 == 2 && j/2 >= 1 && j/2 <= 2:
				want = 1
			}
			if v != want {
				t.Fatalf("A[%d][%d] = %v, want %v", i, j, v, want)
			}
		}
	}
	if err := A.ZeroRows([]int{0, 4}, 1); err == nil || !strings.Contains(err.Error(), "row element 4 (position 1) is outside set \"nodes\"") {
		t.Fatalf("ZeroRows out of range: %v", err)
	}
}

// TestMatErrors checks that misuse is refused with errors naming the
// loop, argument, maps and sets, and that nothing changes.
func TestMatErrors(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	edges := must(op2.NewSet(1, "edges"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	qcell := must(op2.NewMap(cells, nodes, 2, []int32{1, 0, 2, 1}, "qcell"))
	pedge := must(op2.NewMap(edges, nodes, 2, []int32{0, 2}, "pedge"))
	ecell := must(op2.NewMap(edges, cells, 1, []int32{1}, "ecell"))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	good := op2.NewKernel(`void k(double *A) { A[0] = 1; }`, "k")
	tests := []struct {
		name string
		k    *op2.Kernel
		set  op2.IterationSet
		arg  op2.Arg
		want string
	}{
		{"pair not in sparsity", good, cells, A.Arg(op2.Inc, pcell, qcell), `the pair (row map "pcell", column map "qcell") is not one of the sparsity's map pairs`},
		{"maps from another set", good, cells, A.Arg(op2.Inc, pedge, pedge), `row map "pedge" goes from set "edges"`},
		{"read access", good, cells, A.Arg(op2.Read, pcell, pcell), "access READ is not allowed for a matrix"},
		{"wrong element type", op2.NewKernel(`void k(float *A) { A[0] = 1; }`, "k"), cells, A.Arg(op2.Inc, pcell, pcell), "element type float32"},
		{"pointer to pointers", op2.NewKernel(`void k(double **A) { }`, "k"), cells, A.Arg(op2.Inc, pcell, pcell), "should be a pointer"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := op2.ParLoop(tc.k, tc.set, tc.arg)
			var le *op2.LoopError
			if !errors.As(err, &le) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `mat "A"`) {
				t.Fatalf("got %v, want a LoopError containing %q", err, tc.want)
			}
			if d := must(A.Dense()); d[0][0] != 0 || d[1][1] != 0 {
				t.Fatalf("a refused loop changed the matrix: %v", d)
			}
		})
	}
	// Mult's operands.
	x := must(op2.NewDat[float64](nodes, 1, nil, "x"))
	onCells := must(op2.NewDat[float64](cells, 1, nil, "c"))
	for _, tc := range []struct {
		x, y *op2.Dat[float64]
		want string
	}{
		{x, x, "x and y are the same"},
		{onCells, x, `x is dat "c" (float64, dim 1) on set "cells"; it must be on the columns' set "nodes" with dim 1`},
		{x, onCells, `y is dat "c" (float64, dim 1) on set "cells"; it must be on the rows' set "nodes" with dim 1`},
	} {
		if err := A.Mult(tc.x, tc.y); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Mult: %v, want %q", err, tc.want)
		}
	}
	// Two WRITEs of one matrix conflict; two INCs do not.
	k2 := op2.NewKernel(`void k2(double *A, double *B) { }`, "k2")
	if err := op2.ParLoop(k2, cells, A.Arg(op2.Write, pcell, pcell), A.Arg(op2.Write, pcell, pcell)); err == nil || !strings.Contains(err.Error(), "only with INC") {
		t.Fatalf("two WRITEs: %v", err)
	}
	check(t, op2.ParLoop(k2, cells, A.Arg(op2.Inc, pcell, pcell), A.Arg(op2.Inc, pcell, pcell)))

	badSparsity := []struct {
		name       string
		rows, cols *op2.Set
		pairs      []op2.MapPair
		want       string
	}{
		{"no pairs", nodes, nodes, nil, "no map pairs"},
		{"maps from two sets", nodes, nodes, []op2.MapPair{{Row: pcell, Col: pedge}}, `row map "pcell" goes from set "cells" but column map "pedge" from set "edges"`},
		{"row map elsewhere", cells, nodes, []op2.MapPair{{Row: pedge, Col: pedge}}, `row map "pedge" goes to set "nodes", not to the rows' set "cells"`},
		{"column map elsewhere", nodes, nodes, []op2.MapPair{{Row: pedge, Col: ecell}}, `column map "ecell" goes to set "cells", not to the columns' set "nodes"`},
		{"repeated pair", nodes, nodes, []op2.MapPair{{Row: pcell, Col: pcell}, {Row: pcell, Col: pcell}}, "map pair 1 repeats pair 0"},
	}
	for _, tc := range badSparsity {
		t.Run(tc.name, func(t *testing.T) {
			_, err := op2.NewSparsity(tc.rows, 1, tc.cols, 1, tc.pairs, "bad")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `sparsity "bad"`) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

// TestMatElementMatrixLimit: an element matrix larger than a device work
// item keeps privately is refused on the device backends, with an error
// naming the matrix and the limit, and generated on the host backends.
func TestMatElementMatrixLimit(t *testing.T) {
	const arity = 33 // 33×33 float64 values: 8712 bytes
	cells := must(op2.NewSet(1, "cells"))
	nodes := must(op2.NewSet(arity, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, arity, iota32[int32](arity), "pcell"))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := op2.NewKernel(`void k(double *A) { A[0] = 1; }`, "k")
	for _, backend := range []string{"opencl", "cuda"} {
		_, err := op2.Generate(backend, k, cells, A.Arg(op2.Inc, pcell, pcell))
		var le *op2.LoopError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), `mat "A"`) || !strings.Contains(err.Error(), "op2.MaxDeviceElementMatrixBytes") {
			t.Errorf("%s: %v", backend, err)
		}
	}
	if _, err := op2.Generate("sequential", k, cells, A.Arg(op2.Inc, pcell, pcell)); err != nil {
		t.Errorf("sequential: %v", err)
	}
	// A 32×32 element matrix fits a work item, but 1024 of them would
	// overflow the stack PoCL keeps a work group's private memory on: an
	// error, not a crash.
	needBackend(t, "opencl")
	r, err := op2.NewRuntime(op2.Config{Backend: "opencl", DeviceWorkGroupSize: 1024})
	if err != nil {
		t.Skipf("opencl with work groups of 1024: %v", err)
	}
	const a32 = 32
	nodes32 := must(op2.NewSet(a32, "nodes32"))
	p32 := must(op2.NewMap(cells, nodes32, a32, iota32[int32](a32), "p32"))
	B := must(op2.NewMat[float64](must(op2.NewSparsity(nodes32, 1, nodes32, 1, []op2.MapPair{{Row: p32, Col: p32}}, "sp32")), "B"))
	err = r.ParLoop(k, cells, B.Arg(op2.Inc, p32, p32))
	if err == nil || !strings.Contains(err.Error(), "use a device work-group size of at most 256") {
		t.Errorf("a 32×32 element matrix on opencl with work groups of 1024: %v", err)
	}
}

// TestMatStaysOnDevice: a matrix assembled on a device stays there
// (DEVICE state, nothing copied back) until the host reads it; Zero
// zeroes it on the device, and Mult multiplies there.
func TestMatStaysOnDevice(t *testing.T) {
	requireDevice(t)
	rng := rand.New(rand.NewPCG(3, 4))
	cells, nodes, pcell, tab := randomCells(t, rng, 300, 40, 3)
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := op2.NewKernel("#define NR 3\n#define NC 3\n"+elemMatKernel, "elem_mat")
	check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
	down0 := op2.ReadStats().Downloads
	check(t, A.Zero())
	for range 3 {
		check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell)))
	}
	if down := op2.ReadStats().Downloads; down != down0 || A.State() != op2.Device {
		t.Fatalf("after zeroing and assembling on the device: %d copies to the host, state %v; want none, DEVICE", down-down0, A.State())
	}
	// The product runs on the device too.
	x := must(op2.NewDat(nodes, 1, seq(40, func(i int) float64 { return float64(i%3) - 1 }), "x"))
	y := must(op2.NewDat[float64](nodes, 1, nil, "y"))
	check(t, A.Mult(x, y))
	if down := op2.ReadStats().Downloads; down != down0 || A.State() != op2.Device || y.State() != op2.Device {
		t.Fatalf("Mult: %d copies to the host, A %v, y %v; want none, DEVICE, DEVICE", down-down0, A.State(), y.State())
	}
	ys := y.DataRO()
	down0++
	got := must(A.Dense())
	if down := op2.ReadStats().Downloads; down != down0+1 || A.State() != op2.Both {
		t.Fatalf("Dense: %d copies to the host, state %v; want 1, BOTH", down-down0, A.State())
	}
	want := denseAssembly(tab, 3, 1, 40)
	for i := range want {
		var s float64
		for j := range want[i] {
			if got[i][j] != 3*want[i][j] {
				t.Fatalf("A[%d][%d] = %v, want %v", i, j, got[i][j], 3*want[i][j])
			}
			s += got[i][j] * (float64(j%3) - 1)
		}
		if ys[i] != s {
			t.Fatalf("(A x)[%d] = %v, want %v", i, ys[i], s)
		}
	}
}

// TestSparsityFixesNumbering: Renumber refuses the sets of a sparsity.
func TestSparsityFixesNumbering(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	_, err := op2.Renumber(op2.RCMOrdering(pcell))
	if err == nil || !strings.Contains(err.Error(), "used by a loop or a Sparsity") {
		t.Fatalf("Renumber after NewSparsity: %v", err)
	}
}

// The stiffness matrix of the 1-D Laplacian on two linear elements over three nodes:
// each element adds its 2×2 matrix into the rows and columns of its nodes.
func ExampleMat() {
	elems, _ := op2.NewSet(2, "elems")
	nodes, _ := op2.NewSet(3, "nodes")
	pelem, _ := op2.NewMap(elems, nodes, 2, []int32{0, 1, 1, 2}, "pelem")
	sp, err := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pelem, Col: pelem}}, "sp")
	if err != nil {
		fmt.Println(err)
		return
	}
	K, _ := op2.NewMat[float64](sp, "K")
	stiffness := op2.NewKernel(`
void stiffness(double *K) {
  K[0] = 1; K[1] = -1;
  K[2] = -1; K[3] = 1;
}`, "stiffness")
	if err := op2.ParLoop(stiffness, elems, K.Arg(op2.Inc, pelem, pelem)); err != nil {
		fmt.Println(err)
		return
	}
	dense, _ := K.Dense()
	for _, row := range dense {
		fmt.Println(row)
	}
	// Output:
	// [1 -1 0]
	// [-1 2 -1]
	// [0 -1 1]
}

// Solving −u″ = 2 on (0, 1) with u(0) = u(1) = 0 by linear finite
// elements on four elements: assemble the stiffness matrix and the load
// with loops, make the boundary rows identity rows (ZeroRows), and solve
// with the built-in conjugate gradients. Linear elements are exact at the
// nodes here: u = x(1 - x).
func ExampleSolver() {
	const n = 4 // elements
	elems, _ := op2.NewSet(n, "elems")
	nodes, _ := op2.NewSet(n+1, "nodes")
	pelem, _ := op2.NewMap(elems, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pelem")
	sp, _ := op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pelem, Col: pelem}}, "sp")
	K, _ := op2.NewMat[float64](sp, "K")
	b, _ := op2.NewDat[float64](nodes, 1, nil, "b")
	u, _ := op2.NewDat[float64](nodes, 1, nil, "u")
	if _, err := op2.NewConst(1, []float64{1.0 / n}, "elem_h"); err != nil {
		fmt.Println(err)
		return
	}
	element := op2.NewKernel(`
void element(double *K, double *b[2]) {
  K[0] = 1 / elem_h; K[1] = -1 / elem_h;
  K[2] = -1 / elem_h; K[3] = 1 / elem_h;
  *b[0] += elem_h; *b[1] += elem_h; /* f = 2: each node gets f h / 2 */
}`, "element")
	if err := op2.ParLoop(element, elems, K.Arg(op2.Inc, pelem, pelem), b.ArgVec(op2.Inc, pelem)); err != nil {
		fmt.Println(err)
		return
	}
	// Dirichlet rows: u = 0 at both ends.
	if err := K.ZeroRows([]int{0, n}, 1); err != nil {
		fmt.Println(err)
		return
	}
	bv := b.Data()
	bv[0], bv[n] = 0, 0
	s, _ := op2.NewSolver(op2.SolverOptions{RTol: 1e-12})
	info, err := s.Solve(K, u, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("converged:", info.Converged)
	for i, v := range u.DataRO() {
		fmt.Printf("u(%.2f) = %.4f\n", float64(i)/n, v)
	}
	// Output:
	// converged: true
	// u(0.00) = 0.0000
	// u(0.25) = 0.1875
	// u(0.50) = 0.2500
	// u(0.75) = 0.1875
	// u(1.00) = 0.0000
}

// TestMatGatherAfterRenumber: after Renumber, Values is in the new
// numbering and Gather and Dense in the declared one, as Dat.Gather is,
// so a matrix compares with gathered vectors on one process as it does
// under MPI.
func TestMatGatherAfterRenumber(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const n, nn = 60, 30
	_, _, _, tab := randomCells(t, rng, n, nn, 3)
	cells := must(op2.NewSet(n, "cells"))
	nodes := must(op2.NewSet(nn, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 3, tab, "pcell"))
	must(op2.Renumber(op2.RCMOrdering(pcell)))
	sp := must(op2.NewSparsity(nodes, 1, nodes, 1, []op2.MapPair{{Row: pcell, Col: pcell}}, "sp"))
	A := must(op2.NewMat[float64](sp, "A"))
	k := op2.NewKernel("#define NR 3\n#define NC 3\n"+elemMatKernel, "elem_mat")
	check(t, op2.ParLoop(k, cells, op2.ArgIdx(), A.Arg(op2.Inc, pcell, pcell))) // ArgIdx: declared numbers
	want := denseAssembly(tab, 3, 1, nn)                                        // in the declared numbering
	got := must(A.Dense())
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("Dense row %d (declared numbering) = %v, want %v", i, got[i], want[i])
		}
	}
	rowptr, colidx, vals := must3(A.Values())
	decl := nodes.DeclaredNumbers()
	renumbered := false
	for i := 0; i+1 < len(rowptr); i++ {
		renumbered = renumbered || decl[i] != int32(i)
		for k := rowptr[i]; k < rowptr[i+1]; k++ {
			if w := want[decl[i]][decl[colidx[k]]]; vals[k] != w {
				t.Fatalf("Values (new numbering) [%d][%d] = %v, want %v", i, colidx[k], vals[k], w)
			}
		}
	}
	if !renumbered {
		t.Fatal("Renumber kept the nodes' numbering")
	}
}

// TestSparsityTooLarge: patterns whose scalar nonzeros, rows or columns
// the compressed-row form could not index with int32 are refused when
// declared, without overflowing on the way (dims up to op2.MaxDim).
func TestSparsityTooLarge(t *testing.T) {
	cells := must(op2.NewSet(2, "cells"))
	nodes := must(op2.NewSet(3, "nodes"))
	pcell := must(op2.NewMap(cells, nodes, 2, []int32{0, 1, 1, 2}, "pcell"))
	one := must(op2.NewSet(1, "one"))
	pone := must(op2.NewMap(cells, one, 1, []int32{0, 0}, "pone"))
	five := must(op2.NewSet(5, "five"))
	pfive := must(op2.NewMap(cells, five, 1, []int32{0, 0}, "pfive"))
	for _, tc := range []struct {
		name       string
		rows       *op2.Set
		rdim, cdim int
		pair       op2.MapPair
		want       string
	}{
		{"dims op2.MaxDim", nodes, op2.MaxDim, op2.MaxDim, op2.MapPair{Row: pcell, Col: pcell}, "scalar nonzeros"},
		{"nonzeros", nodes, 1 << 15, 1 << 15, op2.MapPair{Row: pcell, Col: pcell}, "scalar nonzeros"},
		{"rows", five, 1 << 29, 1, op2.MapPair{Row: pfive, Col: pone}, "scalar rows and columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cols := nodes
			if tc.pair.Col == pone {
				cols = one
			}
			_, err := op2.NewSparsity(tc.rows, tc.rdim, cols, tc.cdim, []op2.MapPair{tc.pair}, "big")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error about %s", err, tc.want)
			}
		})
	}
}
