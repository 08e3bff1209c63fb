// Command op2halo models Airfoil under MPI beyond the ranks one machine
// has: for each number of ranks and partitioner it lays out the mesh
// exactly as op2.Partition does (internal/dist), measures each rank's
// sections and exchange lists, and estimates the time of one Runge-Kutta
// step from a per-element compute cost and a latency/bandwidth model of the
// network.
//
// Usage:
//
//	op2halo [-scale 1,10] [-ranks 2,4,8,16,32,64] [-partitioners block,rcb,metis]
//	        [-step-ms 23.1] [-latency-us 1.5] [-bandwidth-gbs 12]
//
// The model, per rank and per step (Airfoil runs two steps per iteration):
//
//   - compute: the one-rank step time (-step-ms, measured on one core)
//     shared in proportion to the elements the rank computes: res_calc's
//     57% of the time (its measured share) over owned + exec-halo edges,
//     the rest over owned cells;
//   - exchange: res_calc reads q (4 doubles) and adt (1 double) through the
//     cell map while both are stale, so each neighbour sends one message per
//     Dat, carrying the rank's cell halo (exec + non-exec); the cost is
//     latency × messages + bytes / bandwidth, messages in and out
//     serialised at the rank's network port (pessimistic);
//   - the core elements run while the messages travel, so only the part of
//     the exchange longer than the core's compute is exposed; the rms
//     reduction adds 2·log2(ranks) latencies (allgather).
//
// The step time is the slowest rank's compute + exposed exchange, and the
// efficiency is (one-rank step / ranks) / step time.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/mesh"
)

// model holds the cost parameters.
type model struct {
	stepMs       float64 // one step on one rank, milliseconds
	resShare     float64 // res_calc's share of a step
	latencyUs    float64 // per message
	bandwidthGBs float64 // per rank
}

func main() {
	scales := flag.String("scale", "1,10", "mesh sizes as multiples of Airfoil's 720 000 cells")
	ranks := flag.String("ranks", "2,4,8,16,32,64", "numbers of ranks")
	parts := flag.String("partitioners", "block,rcb,metis", "partitioners")
	m := model{resShare: 0.57}
	flag.Float64Var(&m.stepMs, "step-ms", 23.1, "one Runge-Kutta step on one rank of the 1× mesh, in ms (docs/perf.md: 46.2 s for 1000 iterations of 2 steps, sequential)")
	flag.Float64Var(&m.latencyUs, "latency-us", 1.5, "network latency per message, in µs")
	flag.Float64Var(&m.bandwidthGBs, "bandwidth-gbs", 12, "network bandwidth per rank, in GB/s")
	startup := flag.Bool("startup", false, "also model the start-up (read, partition, migrate, layout, values) per rank; -ranks defaults to 1,2,4,...,1024")
	var c startupCosts
	flag.Float64Var(&c.readParseNs, "read-parse-ns", 124, "start-up: ns per line of the ASCII mesh file a rank parses (its block)")
	flag.Float64Var(&c.readSkipNs, "read-skip-ns", 11, "start-up: ns per line of the file a rank passes over")
	flag.Float64Var(&c.rcbNs, "rcb-ns", 72, "start-up: ns per coordinate of a rank's block and RCB bisection level")
	flag.Float64Var(&c.queryNs, "query-ns", 26, "start-up: ns per map entry of a rank's block whose target's owner it asks (or votes for)")
	flag.Float64Var(&c.migrateNs, "migrate-ns", 37, "start-up: ns per map entry of a rank's block in the migration")
	flag.Float64Var(&c.layoutNs, "layout-ns", 48, "start-up: ns per map entry of a rank's local mesh in the layout")
	flag.Float64Var(&c.valuesNs, "values-ns", 2.1, "start-up: ns per byte of dat values a rank ends with")
	flag.Float64Var(&c.baseMB, "base-mb", 18, "start-up: a rank's resident MB before the mesh (runtime, MPI)")
	flag.Parse()
	rankList := *ranks
	ranksSet := false
	flag.Visit(func(f *flag.Flag) { ranksSet = ranksSet || f.Name == "ranks" })
	if *startup && !ranksSet {
		rankList = "1,2,4,8,16,32,64,128,256,512,1024"
	}
	var sp *startupCosts
	if *startup {
		sp = &c
	}
	sc, err := floats(*scales)
	if err == nil {
		var rs []float64
		if rs, err = floats(rankList); err == nil {
			err = run(os.Stdout, sc, ints(rs), strings.Split(*parts, ","), m, sp)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "op2halo:", err)
		os.Exit(1)
	}
}

func floats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

func ints(fs []float64) []int {
	out := make([]int, len(fs))
	for i, f := range fs {
		out[i] = int(f)
	}
	return out
}

// Set and map indices of the Airfoil mesh in dist form.
const (
	nodes, edges, bedges, cells = 0, 1, 2, 3
	pecell                      = 1
)

// airfoilMesh is Airfoil's mesh with I×J scaled by scale (cells ∝ scale).
func airfoilMesh(scale float64) (*mesh.Mesh, *dist.Mesh, error) {
	f := math.Sqrt(scale)
	m, err := mesh.Generate(int(math.Round(400*f)), int(math.Round(600*f)))
	if err != nil {
		return nil, nil, err
	}
	d := &dist.Mesh{
		Sets: []dist.Set{{Name: "nodes", Size: m.NNode}, {Name: "edges", Size: m.NEdge}, {Name: "bedges", Size: m.NBedge}, {Name: "cells", Size: m.NCell}},
		Maps: []dist.Map{
			{Name: "pedge", From: edges, To: nodes, Arity: 2, Table: m.Edge},
			{Name: "pecell", From: edges, To: cells, Arity: 2, Table: m.Ecell},
			{Name: "pbedge", From: bedges, To: nodes, Arity: 2, Table: m.Bedge},
			{Name: "pbecell", From: bedges, To: cells, Arity: 1, Table: m.Becell},
			{Name: "pcell", From: cells, To: nodes, Arity: 4, Table: m.Cell},
		},
	}
	return m, d, d.Validate()
}

// rankCost is one rank's modelled step.
type rankCost struct {
	halo, neighbours int     // cells received per exchange, neighbour ranks
	bytes            float64 // received per step
	compute, core    float64 // ms
	exchange         float64 // ms
}

func cost(l *dist.Local, d *dist.Mesh, ranks int, m model) rankCost {
	c := l.Sets[cells]
	e := l.Sets[edges]
	var rc rankCost
	rc.halo = c.Total - c.Owned
	rc.neighbours = len(c.Neighbours)
	const dats, doublesPerCell = 2, 5 // q (4) and adt (1)
	rc.bytes = float64(rc.halo * doublesPerCell * 8)
	sent := 0
	for _, nb := range c.Neighbours {
		sent += len(nb.Send)
	}
	messages := 2 * dats * rc.neighbours
	bytesBoth := float64((rc.halo + sent) * doublesPerCell * 8)
	rc.exchange = (float64(messages)*m.latencyUs*1e-3 + bytesBoth/(m.bandwidthGBs*1e9)*1e3)
	if ranks > 1 {
		rc.exchange += 2 * math.Log2(float64(ranks)) * m.latencyUs * 1e-3
	}
	edgeMs := m.stepMs * m.resShare / float64(d.Sets[edges].Size)
	cellMs := m.stepMs * (1 - m.resShare) / float64(d.Sets[cells].Size)
	rc.compute = edgeMs*float64(e.Exec) + cellMs*float64(c.Owned)
	rc.core = edgeMs*float64(e.Core) + cellMs*float64(c.Core)
	return rc
}

// run prints, per mesh scale, the step model's table and, when c is not
// nil, the start-up model's.
func run(out io.Writer, scales []float64, rankCounts []int, partitioners []string, m model, c *startupCosts) error {
	fmt.Fprintf(out, "Airfoil step model: one-rank step %.1f ms at 1× (res_calc %.0f%%), latency %.1f µs, bandwidth %.0f GB/s per rank\n",
		m.stepMs, 100*m.resShare, m.latencyUs, m.bandwidthGBs)
	for _, scale := range scales {
		am, d, err := airfoilMesh(scale)
		if err != nil {
			return err
		}
		mm := m
		mm.stepMs = m.stepMs * float64(am.NCell) / 720000
		fmt.Fprintf(out, "\n%g× mesh: %d cells, %d edges, %d nodes; one-rank step %.1f ms\n\n", scale, am.NCell, am.NEdge, am.NNode, mm.stepMs)
		fmt.Fprintln(out, "| ranks | partitioner | cells per rank | max halo cells (% of owned) | max neighbours | max KB in per step | compute ms | exchange ms | exposed ms | step ms | efficiency |")
		fmt.Fprintln(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		var startupRows strings.Builder
		for _, ranks := range rankCounts {
			for _, p := range partitioners {
				part := dist.Partitioning{Kind: p, Coords: am.X, CoordDim: 2, CoordSet: nodes, Map: pecell}
				start := time.Now()
				owner, _, err := dist.Owners(d, part, ranks)
				ownersS := time.Since(start).Seconds()
				if err != nil {
					return fmt.Errorf("%s on %d ranks: %w", p, ranks, err)
				}
				locals, err := dist.Layout(d, owner, ranks)
				if err != nil {
					return fmt.Errorf("%s on %d ranks: %w", p, ranks, err)
				}
				var worst rankCost
				var step, maxExposed float64
				maxOwned, maxHaloPct := 0, 0.0
				for r := range locals {
					rc := cost(&locals[r], d, ranks, mm)
					exposed := math.Max(0, rc.exchange-rc.core)
					if t := rc.compute + exposed; t > step {
						step = t
					}
					c := locals[r].Sets[cells]
					maxOwned = max(maxOwned, c.Owned)
					if c.Owned > 0 {
						maxHaloPct = math.Max(maxHaloPct, 100*float64(rc.halo)/float64(c.Owned))
					}
					worst.halo = max(worst.halo, rc.halo)
					worst.neighbours = max(worst.neighbours, rc.neighbours)
					worst.bytes = math.Max(worst.bytes, rc.bytes)
					worst.compute = math.Max(worst.compute, rc.compute)
					worst.exchange = math.Max(worst.exchange, rc.exchange)
					maxExposed = math.Max(maxExposed, exposed)
				}
				ideal := mm.stepMs / float64(ranks)
				fmt.Fprintf(out, "| %d | %s | %d | %d (%.1f%%) | %d | %.0f | %.3f | %.3f | %.3f | %.3f | %.0f%% |\n",
					ranks, p, maxOwned, worst.halo, maxHaloPct, worst.neighbours, worst.bytes/1e3,
					worst.compute, worst.exchange, maxExposed, step, 100*ideal/step)
				if c != nil {
					sm := startupMesh{d: d, dats: airfoilDats, owner: owner, locals: locals, ranks: ranks, kind: p, given: -1, coord: 2, metisS: ownersS}
					switch p {
					case "rcb":
						sm.given = nodes
					case "metis":
						sm.given, sm.mapPart = cells, pecell
					}
					sc := sm.model(m, *c)
					sc.print(&startupRows, ranks, p)
				}
			}
		}
		if c != nil {
			startupHeader(out, m, *c)
			io.WriteString(out, startupRows.String())
		}
	}
	return nil
}
