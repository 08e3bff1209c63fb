package op2_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// extrudedResult is what the extruded MPI scenario gathers.
type extrudedResult struct {
	Vol, Mass, Avg   []float64
	Col              []int32
	Total, Low, High float64
	// A loop over the prisms with variable layers: node sums and
	// the kernel's calls.
	VarMass []float64
	VarRuns int32
}

const extrudedLayers = 4

// extrudedMesh is a 12 × 10 grid of squares cut into triangles, with its
// nodes numbered in random order, and the heights of its node layers.
func extrudedMesh() (tri []int32, xy, z []float64) {
	const nx, ny = 12, 10
	perm := rand.New(rand.NewPCG(3, 24)).Perm((nx + 1) * (ny + 1))
	xy = make([]float64, 2*len(perm))
	node := func(i, j int) int32 { return int32(perm[j*(nx+1)+i]) }
	for j := 0; j <= ny; j++ {
		for i := 0; i <= nx; i++ {
			xy[2*node(i, j)], xy[2*node(i, j)+1] = float64(i), float64(j)
		}
	}
	for j := 0; j < ny; j++ {
		for i := 0; i < nx; i++ {
			tri = append(tri, node(i, j), node(i+1, j), node(i+1, j+1), node(i, j), node(i+1, j+1), node(i, j+1))
		}
	}
	z = make([]float64, extrudedLayers+1)
	for k := 1; k <= extrudedLayers; k++ {
		z[k] = z[k-1] + 1 + 0.5*float64(k%2)
	}
	return tri, xy, z
}

// extrudedPrism computes a prism's volume, adds it times (layer+1) to its
// six nodes and reduces it (sum, minimum and maximum).
const extrudedPrism = `
void prism(const double **xy, const double *zb, const double *zt, const int *layer,
           double *vol, double **mass, double *total, double *lo, double *hi) {
  double a = 0.5 * fabs((xy[1][0] - xy[0][0]) * (xy[2][1] - xy[0][1]) - (xy[2][0] - xy[0][0]) * (xy[1][1] - xy[0][1]));
  double v = a * (zt[0] - zb[0]);
  vol[0] = v;
  for (int i = 0; i < 6; i++) mass[i][0] += v * (*layer + 1);
  *total += v;
  if (v < *lo) *lo = v;
  if (v > *hi) *hi = v;
}`

// runExtruded declares the extruded mesh (each rank a block of the base
// sets, or rank 0 all of it), partitions the base sets, and runs on each
// backend a loop incrementing the nodes of the prisms, a loop reading
// them back through the map (halo exchange of an extruded dat), and a
// loop passing each prism's column (ArgIdx).
func runExtruded(t *testing.T, rankZero bool, backends []string) map[string]extrudedResult {
	r, ranks := op2.Rank(), op2.Ranks()
	tri, xy, z := extrudedMesh()
	ntri, nn, nz := len(tri)/3, len(xy)/2, extrudedLayers
	tlo, thi := block(ntri, r, ranks, rankZero)
	nlo, nhi := block(nn, r, ranks, rankZero)
	triangles := must(op2.NewSet(thi-tlo, "triangles"))
	nodes2 := must(op2.NewSet(nhi-nlo, "nodes2"))
	mtri := must(op2.NewMap(triangles, nodes2, 3, tri[3*tlo:3*thi], "tri"))
	var six []int32
	for c := tlo; c < thi; c++ {
		six = append(six, tri[3*c:3*c+3]...)
		six = append(six, tri[3*c:3*c+3]...)
	}
	msix := must(op2.NewMap(triangles, nodes2, 6, six, "six"))
	dxy := must(op2.NewDat(nodes2, 2, xy[2*nlo:2*nhi], "xy"))
	prisms := must(op2.NewExtrudedSet(triangles, nz, "prisms"))
	nodes := must(op2.NewExtrudedSet(nodes2, nz+1, "nodes"))
	var zv []float64
	for range nhi - nlo {
		zv = append(zv, z...)
	}
	dz := must(op2.NewExtrudedDat(nodes, 1, zv, "z"))
	pnodes := must(op2.NewExtrudedMap(prisms, nodes, msix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "pnodes"))
	pxy := must(op2.NewExtrudedMap(prisms, nil, mtri, nil, nil, "pxy"))
	var ranges []int32 // triangle c has layers [c%3, nz-c%2)
	for c := tlo; c < thi; c++ {
		ranges = append(ranges, int32(c%3), int32(nz-c%2))
	}
	vprisms := must(op2.NewVariableExtrudedSet(triangles, nz, ranges, "vprisms"))
	vpnodes := must(op2.NewExtrudedMap(vprisms, nodes, msix, []int{0, 0, 0, 1, 1, 1}, []int{1, 1, 1, 1, 1, 1}, "vpnodes"))
	if _, err := op2.Partition(op2.RCBPartitioner(dxy)); err != nil {
		t.Fatal(err)
	}
	prism := op2.NewKernel(extrudedPrism, "prism")
	avg := op2.NewKernel(`void avg(const double **m, double *a) { a[0] = 0; for (int i = 0; i < 6; i++) a[0] += m[i][0] / 8; }`, "avg")
	col := op2.NewKernel(`void col(const int *c, int *o) { *o = *c; }`, "col")
	vhit := op2.NewKernel(`void vhit(const int *l, double **m, int *n) { for (int i = 0; i < 6; i++) m[i][0] += *l + 1 + i; *n += 1; }`, "vhit")
	results := map[string]extrudedResult{}
	for _, backend := range backends {
		check(t, op2.Use(backend))
		vol := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "vol"))
		mass := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "mass"))
		av := must(op2.NewExtrudedDat[float64](prisms, 1, nil, "avg"))
		cols := must(op2.NewExtrudedDat[int32](prisms, 1, nil, "cols"))
		total := must(op2.NewGlobal(1, []float64{0}, "total"))
		lo := must(op2.NewGlobal(1, []float64{1e300}, "lo"))
		hi := must(op2.NewGlobal(1, []float64{-1e300}, "hi"))
		check(t, op2.ParLoop(prism, prisms, dxy.ArgExtVec(op2.Read, pxy), dz.ArgExtMap(op2.Read, pnodes, 0), dz.ArgExtMap(op2.Read, pnodes, 3),
			op2.ArgLayer(), vol.Arg(op2.Write), mass.ArgExtVec(op2.Inc, pnodes), total.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max)))
		check(t, op2.ParLoop(avg, prisms, mass.ArgExtVec(op2.Read, pnodes), av.Arg(op2.Write)))
		check(t, op2.ParLoop(col, prisms, op2.ArgIdx(), cols.Arg(op2.Write)))
		vmass := must(op2.NewExtrudedDat[float64](nodes, 1, nil, "vmass"))
		runs := must(op2.NewGlobal(1, []int32{0}, "runs"))
		check(t, op2.ParLoop(vhit, vprisms, op2.ArgLayer(), vmass.ArgExtVec(op2.Inc, vpnodes), runs.Arg(op2.Inc)))
		results[backend] = extrudedResult{Vol: must(vol.Gather()), Mass: must(mass.Gather()), Avg: must(av.Gather()), Col: must(cols.Gather()),
			Total: total.Data()[0], Low: lo.Data()[0], High: hi.Data()[0], VarMass: must(vmass.Gather()), VarRuns: runs.Data()[0]}
	}
	return results
}

// TestMPIExtrudedAgreesWithOneRank runs loops over extruded sets on one
// rank, then on 3 MPI ranks (rank 0 declaring the mesh) and, without
// -short, on 2 (each rank a block), the columns partitioned with the base
// sets, on every backend, and compares the gathered results and the
// reductions with the one-rank run. The values are dyadic, so the
// comparison is exact.
func TestMPIExtrudedAgreesWithOneRank(t *testing.T) {
	if mpitest.InRanks() {
		var want extrudedResult
		b, err := os.ReadFile(os.Getenv("OP2_MPI_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		got := runExtruded(t, os.Getenv("OP2_MPI_RANK_ZERO") != "", allBackends)
		for backend, g := range got {
			if g.Total != want.Total || g.Low != want.Low || g.High != want.High || g.VarRuns != want.VarRuns {
				t.Errorf("rank %d %s: reductions %v %v %v, want %v %v %v", op2.Rank(), backend, g.Total, g.Low, g.High, want.Total, want.Low, want.High)
			}
			if op2.Rank() != 0 {
				continue
			}
			if !slices.Equal(g.Vol, want.Vol) || !slices.Equal(g.Mass, want.Mass) || !slices.Equal(g.Avg, want.Avg) || !slices.Equal(g.Col, want.Col) || !slices.Equal(g.VarMass, want.VarMass) {
				t.Errorf("%s on %d ranks: gathered results differ from one rank", backend, op2.Ranks())
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := runExtruded(t, true, []string{"sequential"})["sequential"]
	for e, c := range want.Col {
		if int(c) != e/extrudedLayers {
			t.Fatalf("one rank: prism %d got column %d, want %d", e, c, e/extrudedLayers)
		}
	}
	calls := int32(0)
	for c := range 12 * 10 * 2 {
		calls += int32(extrudedLayers - c%2 - c%3)
	}
	if want.VarRuns != calls {
		t.Fatalf("one rank: the variable-layer loop ran %d times, want %d", want.VarRuns, calls)
	}
	if _, _, z := extrudedMesh(); want.Total != 12*10*z[extrudedLayers] {
		t.Fatalf("one rank: total volume %v, want %v", want.Total, 12*10*z[extrudedLayers])
	}
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	runs := []struct {
		ranks    int
		rankZero bool
	}{{3, true}, {2, false}}
	if testing.Short() {
		runs = runs[:1]
	}
	for _, r := range runs {
		zero := ""
		if r.rankZero {
			zero = "1"
		}
		t.Run(fmt.Sprintf("%d-ranks-rank0decl%v", r.ranks, r.rankZero), func(t *testing.T) {
			mpiRun(t, r.ranks, 3*time.Minute, "OP2_MPI_EXPECT="+path, "OP2_MPI_RANK_ZERO="+zero)
		})
	}
}
