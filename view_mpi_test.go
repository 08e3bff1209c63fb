package op2_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// viewScenario runs loops passing components of a Dat of dim 3 (DatView)
// on the scenario mesh, partitioned with partitioner when in ranks, and
// returns, per backend, the Dat and a cell Dat gathered. A component is
// written directly (so the Dat's halo goes stale), then read through a
// map (so it must be exchanged) while another component is incremented
// through the map (exec halo), then read through the whole cell map.
func viewScenario(t *testing.T, partitioner string, backends []string) map[string][]float64 {
	r, ranks := op2.Rank(), op2.Ranks()
	xy, pedge, pcell, _, q0, w0 := scenarioMesh()
	nlo, nhi := block(mpiNodes, r, ranks, false)
	elo, ehi := block(mpiEdges, r, ranks, false)
	clo, chi := block(mpiCells, r, ranks, false)
	nodes := must(op2.NewSet(nhi-nlo, "nodes"))
	edges := must(op2.NewSet(ehi-elo, "edges"))
	cells := must(op2.NewSet(chi-clo, "cells"))
	mEdge := must(op2.NewMap(edges, nodes, 2, pedge[2*elo:2*ehi], "pedge"))
	mCell := must(op2.NewMap(cells, nodes, 4, pcell[4*clo:4*chi], "pcell"))
	dxy := must(op2.NewDat(nodes, 2, xy[2*nlo:2*nhi], "xy"))
	dw := must(op2.NewDat(edges, 1, w0[elo:ehi], "w"))
	qs := make([]float64, 0, 3*(nhi-nlo))
	for _, v := range q0[nlo:nhi] {
		qs = append(qs, v, -v, 0.5*v)
	}
	dq := must(op2.NewDat(nodes, 3, qs, "q")) // declared before partitioning: the initial values
	if partitioner != "" {
		p := map[string]op2.Partitioner{"rcb": op2.RCBPartitioner(dxy), "metis": op2.METISPartitioner(mCell)}[partitioner]
		must(op2.Partition(p))
	}
	setc := op2.NewKernel("void vm_set(const double *a, double *b) { *b = *a + 1; }", "vm_set")
	flux := op2.NewKernel("void vm_flux(const double *w, const double *b0, const double *b1, double *c0, double *c1) { *c0 += *w * *b1; *c1 -= 0.5 * *b0; }", "vm_flux")
	cellk := op2.NewKernel("void vm_cell(const double **c, double *s) { *s = c[0][0] + c[1][0] - c[2][0] + 0.25 * c[3][0]; }", "vm_cell")
	out := map[string][]float64{}
	for _, backend := range backends {
		check(t, op2.Use(backend))
		q := must(op2.NewDat(nodes, 3, dq.DataRO(), "q"+backend))
		s := must(op2.NewDat[float64](cells, 1, nil, "s"))
		v0, v1, v2 := must(q.View(0)), must(q.View(1)), must(q.View(2))
		for it := 0; it < 2; it++ {
			check(t, op2.ParLoop(setc, nodes, v0.Arg(op2.Read), v1.Arg(op2.Write)))
			check(t, op2.ParLoop(flux, edges, dw.Arg(op2.Read), v1.ArgMap(op2.Read, mEdge, 0), v1.ArgMap(op2.Read, mEdge, 1),
				v2.ArgMap(op2.Inc, mEdge, 0), v2.ArgMap(op2.Inc, mEdge, 1)))
			check(t, op2.ParLoop(cellk, cells, v2.ArgVec(op2.Read, mCell), s.Arg(op2.Write)))
		}
		out[backend] = append(must(q.Gather()), must(s.Gather())...)
	}
	return out
}

// TestMPIDatView: loops writing a component of a Dat through a view and
// then reading it through a map on other ranks' elements (halo
// exchange of the whole Dat), and incrementing another component through a
// map (exec halo), give on 2 ranks (and 3 without -short) on every
// backend (with -short, the host backends) the values of one rank.
func TestMPIDatView(t *testing.T) {
	if mpitest.InRanks() {
		var want []float64
		b, err := os.ReadFile(os.Getenv("OP2_MPI_EXPECT"))
		check(t, err)
		check(t, json.Unmarshal(b, &want))
		backends := allBackends
		if os.Getenv("OP2_MPI_SHORT") != "" {
			// TestMPIAgreesWithOneRank runs the device backends'
			// halo exchanges under -short; views add nothing there.
			backends = hostBackends
		}
		got := viewScenario(t, os.Getenv("OP2_MPI_PARTITIONER"), backends)
		if op2.Rank() == 0 {
			for backend, g := range got {
				if !slices.Equal(g, want) {
					t.Errorf("%s on %d ranks: gathered values differ from one rank's", backend, op2.Ranks())
				}
			}
		}
		check(t, op2.Finalize())
		return
	}
	want := viewScenario(t, "", []string{"sequential"})["sequential"]
	path := filepath.Join(t.TempDir(), "want.json")
	b, err := json.Marshal(want)
	check(t, err)
	check(t, os.WriteFile(path, b, 0o600))
	runs := []struct {
		ranks       int
		partitioner string
	}{{2, "rcb"}}
	short := ""
	if testing.Short() {
		short = "1"
	} else {
		runs = append(runs, struct {
			ranks       int
			partitioner string
		}{3, "metis"})
	}
	for _, r := range runs {
		t.Run(fmt.Sprintf("%d-ranks-%s", r.ranks, r.partitioner), func(t *testing.T) {
			mpiRun(t, r.ranks, 3*time.Minute, "OP2_MPI_EXPECT="+path, "OP2_MPI_PARTITIONER="+r.partitioner, "OP2_MPI_SHORT="+short)
		})
	}
}
