package probe_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/vtk"
)

const mpiN = 40

func perm(i int) int32 { return int32(i * 17 % mpiN) }

// serialRing: edge e joins perm(e) and perm(e+1).
func ringMap() []int32 {
	v := make([]int32, 2*mpiN)
	for e := 0; e < mpiN; e++ {
		v[2*e], v[2*e+1] = perm(e), perm((e+1)%mpiN)
	}
	return v
}

var kIdx2 = op2.NewKernel(`void idx2(const int *e, const int *n1, int *out) { out[0] = *e; out[1] = *n1; }`, "idx2")
var kOptInc = op2.NewKernel(`void optinc(const double *w, double *a, double *b) { if (a) { *a += *w; *b += *w; } }`, "optinc")
var kTuneMPI = op2.NewKernel(`void tmpi(const double *w, int *a, int *b, double *lo0, double *lo1) { *a += 2; *b += 2; *lo0 = *w; *lo1 = *w; }`, "tmpi")
var kSumMap = op2.NewKernel(`void summap(const double *a, const double *b, double *s) { *s += *a + 2 * *b; }`, "summap")

func mpiBody(t *testing.T, dir string) {
	r := op2.Rank()
	n := 0
	var mv []int32
	if r == 0 {
		n, mv = mpiN, ringMap()
	}
	nodes := must(op2.NewSet(n, "nodes"))
	edges := must(op2.NewSet(n, "edges"))
	pedge := must(op2.NewMap(edges, nodes, 2, mv, "pedge"))
	var xy, wv, lov []float64
	if r == 0 {
		for i := 0; i < mpiN; i++ {
			a := 2 * math.Pi * float64(i) / mpiN
			xy = append(xy, math.Cos(a), math.Sin(a))
			wv = append(wv, float64((i*7)%mpiN))
			lov = append(lov, 1e9)
		}
	}
	coords := must(op2.NewDat(nodes, 2, xy, "coords"))
	w := must(op2.NewDat(edges, 1, wv, "w"))
	lo := must(op2.NewDat(nodes, 1, lov, "lo"))
	acc := must(op2.NewDat[float64](nodes, 1, nil, "acc"))
	out := must(op2.NewDat[int32](edges, 2, nil, "out"))
	_, err := op2.Partition(op2.BlockPartitioner())
	check(t, err)
	t.Logf("rank %d of %d, backend %s, nodes %d (+%d halo)", r, op2.Ranks(), op2.Backend(), nodes.Size(), nodes.TotalSize()-nodes.Size())

	// ArgIdx and m.ArgIdx are global.
	check(t, op2.ParLoop(kIdx2, edges, op2.ArgIdx(), pedge.ArgIdx(1), out.Arg(op2.Write)))
	got := must(out.Gather())
	if r == 0 {
		for e := 0; e < mpiN; e++ {
			if got[2*e] != int32(e) || got[2*e+1] != perm((e+1)%mpiN) {
				t.Errorf("ArgIdx under MPI: element %d gives %v, want [%d %d]", e, got[2*e:2*e+2], e, perm((e+1)%mpiN))
				break
			}
		}
	}
	// MIN through a map.
	check(t, op2.ParLoop(kMin, edges, w.Arg(op2.Read), lo.ArgMap(op2.Min, pedge, 0), lo.ArgMap(op2.Min, pedge, 1)))
	glo := must(lo.Gather())
	if r == 0 {
		want := slices.Repeat([]float64{1e9}, mpiN)
		for e := 0; e < mpiN; e++ {
			for _, nd := range []int32{perm(e), perm((e + 1) % mpiN)} {
				want[nd] = math.Min(want[nd], wv[e])
			}
		}
		if !slices.Equal(glo, want) {
			t.Errorf("MIN under MPI: %v\nwant %v", glo, want)
		}
	}
	// Optional increments toggled, then a loop that reads acc through the map (halo).
	for i, on := range []bool{true, false, true} {
		check(t, op2.ParLoop(kOptInc, edges, w.Arg(op2.Read), op2.Opt(on, acc.ArgMap(op2.Inc, pedge, 0)), op2.Opt(on, acc.ArgMap(op2.Inc, pedge, 1))))
		_ = i
	}
	s := must(op2.NewGlobal(1, []float64{0}, "s"))
	check(t, op2.ParLoop(kSumMap, edges, acc.ArgMap(op2.Read, pedge, 0), acc.ArgMap(op2.Read, pedge, 1), s.Arg(op2.Inc)))
	wantAcc := make([]float64, mpiN)
	for e := 0; e < mpiN; e++ {
		wantAcc[perm(e)] += 2 * float64((e*7)%mpiN)
		wantAcc[perm((e+1)%mpiN)] += 2 * float64((e*7)%mpiN)
	}
	wantS := 0.0
	for e := 0; e < mpiN; e++ {
		wantS += wantAcc[perm(e)] + 2*wantAcc[perm((e+1)%mpiN)]
	}
	if s.Value() != wantS {
		t.Errorf("rank %d: opt toggled under MPI, sum %v, want %v", r, s.Value(), wantS)
	}
	// Zero, then the read loop again: halos must be zero too.
	check(t, acc.Zero())
	s.SetValue(0)
	check(t, op2.ParLoop(kSumMap, edges, acc.ArgMap(op2.Read, pedge, 0), acc.ArgMap(op2.Read, pedge, 1), s.Arg(op2.Inc)))
	if s.Value() != 0 {
		t.Errorf("rank %d: after Zero sum %v", r, s.Value())
	}
	// Range: owned only.
	if _, err := lo.Range(0, nodes.Size()); err != nil {
		t.Errorf("rank %d: Range over owned: %v", r, err)
	}
	if _, err := lo.Range(0, nodes.Size()+1); err == nil {
		t.Errorf("rank %d: Range into the halo accepted", r)
	}
	// Dumps: write lo, read into acc (collective), loop reads acc through halo.
	p := filepath.Join(dir, "lo.txt")
	check(t, lo.WriteText(p))
	check(t, acc.ReadText(p))
	s.SetValue(0)
	check(t, op2.ParLoop(kSumMap, edges, acc.ArgMap(op2.Read, pedge, 0), acc.ArgMap(op2.Read, pedge, 1), s.Arg(op2.Inc)))
	wantS = 0
	if r == 0 {
		for e := 0; e < mpiN; e++ {
			wantS += glo[perm(e)] + 2*glo[perm((e+1)%mpiN)]
		}
	}
	ws := must(op2.NewGlobal(1, []float64{wantS}, "ws"))
	_ = ws
	if r == 0 && s.Value() != wantS {
		t.Errorf("after ReadText under MPI: sum %v, want %v", s.Value(), wantS)
	}
	pb := filepath.Join(dir, "lo.bin")
	check(t, lo.WriteBinary(pb))
	check(t, acc.Zero())
	check(t, acc.ReadBinary(pb))
	ga := must(acc.Gather())
	if r == 0 && !slices.Equal(ga, glo) {
		t.Errorf("ReadBinary under MPI: %v", ga)
	}
	// CopyTo then read through map.
	check(t, acc.Zero())
	check(t, lo.CopyTo(acc))
	s.SetValue(0)
	check(t, op2.ParLoop(kSumMap, edges, acc.ArgMap(op2.Read, pedge, 0), acc.ArgMap(op2.Read, pedge, 1), s.Arg(op2.Inc)))
	if r == 0 && s.Value() != wantS {
		t.Errorf("after CopyTo under MPI: sum %v, want %v", s.Value(), wantS)
	}
	// DataWO: every rank writes its owned values = 1; read loop sees 1 everywhere incl. halo.
	wo := acc.DataWO()
	for i := range wo {
		wo[i] = 1
	}
	s.SetValue(0)
	check(t, op2.ParLoop(kSumMap, edges, acc.ArgMap(op2.Read, pedge, 0), acc.ArgMap(op2.Read, pedge, 1), s.Arg(op2.Inc)))
	if s.Value() != 3*mpiN {
		t.Errorf("rank %d: after DataWO sum %v, want %d", r, s.Value(), 3*mpiN)
	}
	// VTK gather.
	g, err := vtk.FromOP2(coords, pedge)
	check(t, err)
	check(t, vtk.AddPointDat(g, lo))
	check(t, vtk.AddCellDat(g, w))
	if r == 0 {
		if g.NumCells() != mpiN || g.NumPoints() != mpiN {
			t.Errorf("vtk: %d cells %d points", g.NumCells(), g.NumPoints())
		}
		check(t, g.Validate())
		pa := g.PointArray("lo")
		if pa == nil || !slices.Equal(pa.Float64s(), glo) {
			t.Errorf("vtk point array %v", pa)
		}
		if !slices.Equal(g.Cells, ringMap()) {
			t.Errorf("vtk cells %v", g.Cells)
		}
	}
	// With the auto-tuner, a loop called until every rank has tuned it
	// (each rank measures its own settings): MIN through the map and
	// integer increments, compared with the serial results.
	if os.Getenv("OP2_TUNE") == "1" {
		cnt := must(op2.NewDat[int32](nodes, 1, nil, "cnt"))
		lo2 := must(op2.NewDat[float64](nodes, 1, nil, "lo2"))
		check(t, lo.CopyTo(lo2))
		for range 40 {
			check(t, op2.ParLoop(kTuneMPI, edges, w.Arg(op2.Read), cnt.ArgMap(op2.Inc, pedge, 0), cnt.ArgMap(op2.Inc, pedge, 1),
				lo2.ArgMap(op2.Min, pedge, 0), lo2.ArgMap(op2.Min, pedge, 1)))
		}
		gc, gl := must(cnt.Gather()), must(lo2.Gather())
		if r == 0 {
			want := make([]int32, mpiN)
			for e := 0; e < mpiN; e++ {
				want[perm(e)] += 40 * 2
				want[perm((e+1)%mpiN)] += 40 * 2
			}
			if !slices.Equal(gc, want) || !slices.Equal(gl, glo) {
				t.Errorf("tuned under MPI: cnt %v\nwant %v\nlo %v\nwant %v", gc, want, gl, glo)
			}
		}
	}
	// Subsets after Partition: each rank names its owned edges of even
	// weight; increments through the map (exec halo edges in the subset
	// included) give each node its number of such edges.
	var even []int32
	for i, v := range w.DataRO() {
		if int(v)%2 == 0 {
			even = append(even, int32(i))
		}
	}
	sub := must(op2.NewSubset(edges, even))
	deg := must(op2.NewDat[int32](nodes, 1, nil, "deg"))
	check(t, op2.ParLoop(op2.NewKernel("void pdeg(int *a, int *b) { *a += 1; *b += 1; }", "pdeg"), sub, deg.ArgMap(op2.Inc, pedge, 0), deg.ArgMap(op2.Inc, pedge, 1)))
	if gd := must(deg.Gather()); r == 0 {
		want := make([]int32, mpiN)
		for e := 0; e < mpiN; e++ {
			if (e*7)%mpiN%2 == 0 {
				want[perm(e)]++
				want[perm((e+1)%mpiN)]++
			}
		}
		if !slices.Equal(gd, want) {
			t.Errorf("a loop over a subset under MPI: %v\nwant %v", gd, want)
		}
	}
	check(t, op2.Finalize())
}

func testMPI(t *testing.T, env ...string) {
	if mpitest.InRanks() {
		mpiBody(t, os.Getenv("PROBE_DIR"))
		return
	}
	dir := t.TempDir()
	out, err := mpitest.Output(t, 2, 4*time.Minute, append(env, "PROBE_DIR="+dir)...)
	if err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	t.Logf("%s", out)
}

func TestMPIFeaturesSequential(t *testing.T) { testMPI(t, "OP2_BACKEND=sequential") }
func TestMPIFeaturesOpenCL(t *testing.T)     { testMPI(t, "OP2_BACKEND=opencl") }
func TestMPIFeaturesTunedOpenMP(t *testing.T) {
	testMPI(t, "OP2_BACKEND=openmp", "OP2_TUNE=1", "OMP_NUM_THREADS=2")
}
func TestMPIFeaturesTunedOpenCL(t *testing.T) { testMPI(t, "OP2_BACKEND=opencl", "OP2_TUNE=1") }
func TestMPIFeaturesOpenCLAtomics(t *testing.T) {
	testMPI(t, "OP2_BACKEND=opencl", "OP2_DEVICE_SCHEME=atomics")
}
