package op2_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
)

// global64Base numbers the sets beyond 2³¹ on the ranks of
// TestGlobal64BeyondInt32 (dist.SetNumberBaseForTest): every rank's
// block starts past int32.
const global64Base = 1<<31 + 12_345

type global64Result struct {
	Q, Res []float64
	Pcell  []int64
	Sum    float64
	Back   []float64 // q restored from a checkpoint after being zeroed
	// q restored from the checkpoint another run wrote (on another
	// number of ranks), before this run's own.
	Other []float64
}

// runGlobal64 declares scenarioMesh's nodes, edges and cells in blocks
// with maps of 64-bit values numbered from base (0 on one process), or
// reads them from the HDF5 file load, partitions the mesh, writes it to
// the HDF5 file save (when not empty), runs loops through the maps and
// gathers the results, a checkpoint written to ckpt and restored
// included (and, first, when other is not empty, the checkpoint there
// restored).
func runGlobal64(t *testing.T, base int64, partitioner, ckpt, load, save, other string) global64Result {
	r, ranks := op2.Rank(), op2.Ranks()
	xy, pedge, pcell, _, q0, w0 := scenarioMesh()
	nlo, nhi := block(mpiNodes, r, ranks, false)
	elo, ehi := block(mpiEdges, r, ranks, false)
	clo, chi := block(mpiCells, r, ranks, false)
	shift := func(v []int32) []int64 {
		out := make([]int64, len(v))
		for i, x := range v {
			out[i] = int64(x) + base
		}
		return out
	}
	var nodes, edges, cells *op2.Set
	var mEdge, mCell *op2.Map
	var dxy, q, dw *op2.Dat[float64]
	if load != "" {
		f := must(hdf5.Open(load))
		nodes, edges, cells = must(f.DeclareSet("nodes")), must(f.DeclareSet("edges")), must(f.DeclareSet("cells"))
		mEdge, mCell = must(f.DeclareMap(edges, nodes, 2, "pedge")), must(f.DeclareMap(cells, nodes, 4, "pcell"))
		dxy, q = must(hdf5.DeclareDat[float64](f, nodes, 2, "xy")), must(hdf5.DeclareDat[float64](f, nodes, 1, "q"))
		dw = must(hdf5.DeclareDat[float64](f, edges, 1, "w"))
		check(t, f.Close())
	} else {
		nodes = must(op2.NewSet(nhi-nlo, "nodes"))
		edges = must(op2.NewSet(ehi-elo, "edges"))
		cells = must(op2.NewSet(chi-clo, "cells"))
		mEdge = must(op2.NewMap64(edges, nodes, 2, shift(pedge[2*elo:2*ehi]), "pedge"))
		mCell = must(op2.NewMap64(cells, nodes, 4, shift(pcell[4*clo:4*chi]), "pcell"))
		dxy = must(op2.NewDat(nodes, 2, xy[2*nlo:2*nhi], "xy"))
		q = must(op2.NewDat(nodes, 1, q0[nlo:nhi], "q"))
		dw = must(op2.NewDat(edges, 1, w0[elo:ehi], "w"))
	}
	p := op2.BlockPartitioner()
	if partitioner == "rcb" {
		p = op2.RCBPartitioner(dxy)
	}
	if _, err := op2.Partition(p); err != nil {
		t.Fatal(err)
	}
	if save != "" {
		f := must(hdf5.Create(save))
		for _, s := range []*op2.Set{nodes, edges, cells} {
			check(t, f.WriteSet(s))
		}
		check(t, f.WriteMap(mEdge))
		check(t, f.WriteMap(mCell))
		check(t, hdf5.WriteDat(f, dxy))
		check(t, hdf5.WriteDat(f, q))
		check(t, hdf5.WriteDat(f, dw))
		check(t, f.Close())
	}
	for _, g := range nodes.DeclaredNumbers64() {
		if g < base || g >= base+mpiNodes {
			t.Fatalf("rank %d: node numbered %d, outside [%d,%d)", r, g, base, base+mpiNodes)
		}
	}
	flux := op2.NewKernel(`void flux(const double *q0, const double *q1, const double *w, double *r0, double *r1) {
	double f = *w * (*q0 - 0.5 * *q1);
	*r0 += f; *r1 -= 0.5 * f; }`, "flux")
	relax := op2.NewKernel("void relax(double *q, const double *r) { *q = 0.5 * *q + 0.25 * *r; }", "relax")
	gather4 := op2.NewKernel(`void gather4(double **q, double *s) { for (int i = 0; i < 4; i++) *s += *q[i]; }`, "gather4")
	res := must(op2.NewDat[float64](nodes, 1, nil, "res"))
	sum := must(op2.NewGlobal(1, []float64{0}, "sum"))
	for range 3 {
		check(t, op2.ParLoop(flux, edges, q.ArgMap(op2.Read, mEdge, 0), q.ArgMap(op2.Read, mEdge, 1), dw.Arg(op2.Read),
			res.ArgMap(op2.Inc, mEdge, 0), res.ArgMap(op2.Inc, mEdge, 1)))
		check(t, op2.ParLoop(relax, nodes, q.Arg(op2.RW), res.Arg(op2.Read)))
	}
	check(t, op2.ParLoop(gather4, cells, q.ArgVec(op2.Read, mCell), sum.Arg(op2.Inc)))
	var out global64Result
	out.Q, out.Res, out.Sum = must(q.Gather()), must(res.Gather()), sum.Value()
	out.Pcell = must(mCell.Gather64())
	if base > 0 {
		// Index arguments are 32-bit: refused, naming the set.
		idx := must(op2.NewDat[int32](cells, 1, nil, "idx"))
		err := op2.ParLoop(op2.NewKernel("void idk(const int *c, int *o) { *o = *c; }", "idk"), cells, op2.ArgIdx(), idx.Arg(op2.Write))
		if err == nil || !strings.Contains(err.Error(), `set "cells" is numbered beyond int32`) {
			t.Errorf("rank %d: an index argument on a set numbered beyond int32: %v, want an error naming the set", r, err)
		}
		// The 32-bit form names the map and the number that does not fit.
		_, err = mCell.Gather()
		if r == 0 && (err == nil || !strings.Contains(err.Error(), `map "pcell"`) || !strings.Contains(err.Error(), "beyond int32")) {
			t.Errorf("Gather of a map numbered beyond int32: %v, want an error naming the map and the value", err)
		}
	}
	if other != "" {
		check(t, q.Zero())
		must(op2.Restore(other))
		out.Other = must(q.Gather())
	}
	check(t, op2.Checkpoint(ckpt, nil))
	check(t, q.Zero())
	must(op2.Restore(ckpt))
	out.Back = must(q.Gather())
	// The maps stay alive through the checkpoints and restores, whose
	// files keep their fingerprints (a collected map is left out).
	runtime.KeepAlive(mEdge)
	runtime.KeepAlive(mCell)
	return out
}

// TestGlobal64BeyondInt32 runs a mesh whose global numbers start past
// 2³¹ (maps declared with NewMap64, every rank's block numbered beyond
// int32) through Partition, halo exchanges, Gather, Map.Gather64, an HDF5
// file and a checkpoint on 3 ranks, then reads the mesh back from the
// file (its maps 64-bit datasets) on 2 ranks and restores the 3 ranks'
// checkpoint there, restores the one process's on 3 ranks, and compares
// the runs with the same mesh numbered from 0 in one process.
func TestGlobal64BeyondInt32(t *testing.T) {
	if mpitest.InRanks() {
		var want global64Result
		check(t, json.Unmarshal(must(os.ReadFile(os.Getenv("OP2_G64_EXPECT"))), &want))
		defer dist.SetNumberBaseForTest(dist.SetNumberBaseForTest(global64Base))
		got := runGlobal64(t, global64Base, os.Getenv("OP2_G64_PARTITIONER"), os.Getenv("OP2_G64_CKPT"),
			os.Getenv("OP2_G64_LOAD"), os.Getenv("OP2_G64_SAVE"), os.Getenv("OP2_G64_OTHER"))
		if op2.Rank() == 0 {
			for i := range got.Pcell {
				got.Pcell[i] -= global64Base
			}
			if !slices.Equal(got.Q, want.Q) || !slices.Equal(got.Res, want.Res) || got.Sum != want.Sum {
				t.Errorf("%d ranks: results differ from one process (q %v res %v sum %v/%v)", op2.Ranks(),
					slices.Equal(got.Q, want.Q), slices.Equal(got.Res, want.Res), got.Sum, want.Sum)
			}
			if !slices.Equal(got.Pcell, want.Pcell) {
				t.Errorf("%d ranks: Map.Gather64 less the base differs from one process", op2.Ranks())
			}
			if !slices.Equal(got.Back, want.Back) || !slices.Equal(got.Back, got.Q) {
				t.Errorf("%d ranks: q restored from a checkpoint differs", op2.Ranks())
			}
			if os.Getenv("OP2_G64_OTHER") != "" && !slices.Equal(got.Other, want.Q) {
				t.Errorf("%d ranks: q restored from the checkpoint another number of ranks wrote differs", op2.Ranks())
			}
		}
		check(t, op2.Finalize())
		return
	}
	if _, err := hdf5.Create(filepath.Join(t.TempDir(), "probe.h5")); err != nil {
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	}
	dir := t.TempDir()
	want := runGlobal64(t, 0, "block", filepath.Join(dir, "one.ckpt"), "", "", "")
	path := filepath.Join(dir, "want.json")
	check(t, os.WriteFile(path, must(json.Marshal(want)), 0o600))
	mesh := filepath.Join(dir, "mesh.h5")
	for _, run := range []struct {
		name, partitioner string
		ranks             int
		env, other        string
	}{
		{"3-ranks-block-write", "block", 3, "OP2_G64_SAVE=" + mesh, ""},
		// Restores the first run's checkpoint too.
		{"2-ranks-rcb-read", "rcb", 2, "OP2_G64_LOAD=" + mesh, filepath.Join(dir, "3-ranks-block-write.ckpt")},
		// Restores the one process's checkpoint, numbered from 0: the
		// maps' fingerprints are in the declared rows, less the base.
		{"3-ranks-rcb-one", "rcb", 3, "OP2_G64_SAVE=", filepath.Join(dir, "one.ckpt")},
	} {
		t.Run(run.name, func(t *testing.T) {
			mpiRun(t, run.ranks, 3*time.Minute, "OP2_G64_EXPECT="+path, "OP2_G64_PARTITIONER="+run.partitioner,
				"OP2_G64_CKPT="+filepath.Join(dir, run.name+".ckpt"), run.env, "OP2_G64_OTHER="+run.other)
		})
		if t.Failed() {
			return
		}
	}
	// The file's maps are 64-bit datasets holding the numbers beyond 2³¹.
	f := must(hdf5.Open(mesh))
	defer f.Close()
	for _, name := range []string{"pedge", "pcell"} {
		if info := must(f.Info(name)); info.Type != "long long" {
			t.Errorf("map %s written as %q, want long long", name, info.Type)
		}
	}
	_, _, pcell, _, _, _ := scenarioMesh()
	got := must(hdf5.ReadAll[int64](f, "pcell", 4))
	for i, v := range got {
		if v != int64(pcell[i])+global64Base {
			t.Fatalf("pcell entry %d in the file is %d, want %d", i, v, int64(pcell[i])+global64Base)
		}
	}
}
