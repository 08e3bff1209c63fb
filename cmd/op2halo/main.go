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
//	        [-startup [-read-parse-ns 124] [-read-skip-ns 11] [-rcb-ns 72]
//	         [-query-ns 26] [-migrate-ns 37] [-layout-ns 48] [-values-ns 2.1]
//	         [-base-mb 18]]
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
//
// # Start-up
//
// -startup adds a second table per mesh (-ranks then defaults to 1, 2, 4,
// ..., 1024): the start-up of op2.Partition as dist.PartitionBlocks runs
// it, each rank starting from its declared block of every set
// (mesh.Block's split) of an ASCII mesh file, phase by phase as airfoil
// -startup reports them. Every figure comes from the layout computed for
// that rank count (nothing is extrapolated) and a phase's time is the
// slowest rank's compute plus the exchanges' network time (each exchange
// ends when its slowest rank does):
//
//   - read: every rank passes over every line of the file (-read-skip-ns
//     per line) and parses its block's lines (-read-parse-ns per line; one
//     line per element of every set);
//   - partition: the block sizes' allgather and an agreement; for rcb, per
//     bisection level, the counts, extents and 12 radix rounds, each an
//     MPI_Allreduce of the active parts' histograms (256 int64 per part;
//     recursive doubling), and -rcb-ns per coordinate of the
//     rank's block and level; for metis, the partitioned map's table
//     gathered on rank 0, which computes for the time this command's own
//     dist.Owners call took (METIS and the whole mesh's spread: an
//     overestimate), and the owners sent back; then the spread through
//     the maps in dist's order, each map whose source takes its owners from
//     its targets costing an owner query (4 bytes per distinct target of
//     the rank's block to the rank declaring it and back), each map whose
//     target takes votes 8 bytes per entry, both -query-ns per entry;
//   - migrate: the owner queries of the maps not asked yet, the cut pairs
//     of every map of arity 2 or more (8 bytes per cut pair to the rank
//     declaring its first element), their sum (an MPI_Allreduce), and per
//     set the rounds' allgather, the counts' all-to-all and the records
//     (8 bytes + 4 per entry of the set's maps) from the rank
//     declaring each element to each rank holding it as owned or exec
//     halo; -migrate-ns per map entry of the rank's block;
//   - layout: per set, the non-exec halo fetched (4 bytes asked, a record
//     back), and the exchange lists (4 bytes per set to every rank plus 4
//     per halo element to its owner); -layout-ns per map entry of the
//     rank's local mesh (rows of every local element);
//   - values: per dat (Airfoil's x, q, qold, res, adt, bound) the counts'
//     all-to-all, its values sent as the records were and its non-exec
//     halo fetched again;
//     -values-ns per byte of values the rank ends with.
//
// Every exchange is internal/mpi's Alltoallv: an all-to-all of 8 bytes
// per rank pair (Bruck: log2(ranks) latencies + 4·ranks bytes each), then
// latency per non-empty message in and out and bytes in and out over the
// rank's port, as in the step model; messages to itself are free.
//
// Memory is the bytes a rank holds live at its worst moment in each
// phase, plus -base-mb (runtime and MPI), with B the rank's block (4
// bytes per map entry, the dats' values) and O its owners (4 bytes per
// block element):
//
//   - read: B;
//   - partition: B + O + (rcb: 12 bytes per coordinate + the largest
//     histogram and its reduction; metis, rank 0:
//     12 bytes per entry of the map + 4 per target element) + 8 bytes per
//     entry queried (owners of targets, their positions) + votes received;
//   - migrate: B + O + 4 bytes per block entry (targets' owners) + the
//     destination lists (4 bytes per element and per record sent) + every
//     set's records received + the largest set's records sent;
//   - layout: B + O + destinations + the records of every local
//     element + the local maps (4 bytes per entry) + 16 bytes per local
//     element (global numbers, order, lookup);
//   - values: B + destinations + 4 bytes per local element (order) + the
//     final part + the largest dat's values sent and received;
//   - final part (the last column): local maps, global numbers and every
//     dat's values over the local elements.
//
// The costs' defaults were measured on the development VM (2 shared
// cores, min of three runs): the read ones timing mesh.ReadBlock of
// Airfoil's new_grid.dat as rank 0 of 1 (0.389 s) and rank 1023 of 1024
// (0.032 s, the pass over the file's 2 883 202 lines); the others from
// airfoil -startup on 2 ranks, so that the model gives the measured
// phases there (rcb: partition 0.101 s, migrate 0.196, layout 0.207,
// values 0.093; block: migrate 0.272, whose extra 0.076 s over rcb's
// is the owner queries of 2.88 million entries RCB's spread had made);
// -base-mb is a rank's peak on a 96-cell mesh. The modelled memory counts
// live bytes: the resident peaks measured are 1.3 to 1.8 times larger,
// the Go collector's headroom.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/internal/regfile"
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
	ranks := flag.String("ranks", "2,4,8,16,32,64", "numbers of ranks, comma-separated (at most the mesh's cells)")
	parts := flag.String("partitioners", "block,rcb,metis", "partitioners, comma-separated: block, rcb or metis")
	m := model{resShare: 0.57}
	flag.Float64Var(&m.stepMs, "step-ms", 23.1, "one Runge-Kutta step on one rank of the 1× mesh, in ms (docs/history/perf-notebook-2026-11-25.md: 46.2 s for 1000 iterations of 2 steps, sequential)")
	flag.Float64Var(&m.latencyUs, "latency-us", 1.5, "network latency per message, in µs")
	flag.Float64Var(&m.bandwidthGBs, "bandwidth-gbs", 12, "network bandwidth per rank, in GB/s")
	startup := flag.Bool("startup", false, "also model the start-up (read, partition, migrate, layout, values) per rank; -ranks defaults to 1,2,4,...,1024 (those each -scale mesh can take)")
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
	if flag.NArg() > 0 {
		// Flag parsing stops at the first argument that is not a flag:
		// "-ranks 2 8 -scale 1" would leave out 8 and -scale.
		fmt.Fprintf(os.Stderr, "op2halo: unexpected arguments %q (flags only; a list is comma-separated, e.g. -ranks 2,8)\n", flag.Args())
		os.Exit(1)
	}
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
	if err != nil {
		err = fmt.Errorf("-scale: %w", err)
	}
	for _, p := range []struct {
		name string
		v    float64
	}{{"step-ms", m.stepMs}, {"latency-us", m.latencyUs}, {"bandwidth-gbs", m.bandwidthGBs}, {"read-parse-ns", c.readParseNs},
		{"read-skip-ns", c.readSkipNs}, {"rcb-ns", c.rcbNs}, {"query-ns", c.queryNs}, {"migrate-ns", c.migrateNs},
		{"layout-ns", c.layoutNs}, {"values-ns", c.valuesNs}, {"base-mb", c.baseMB}} {
		if err == nil && (!(p.v >= 0) || math.IsInf(p.v, 0) || p.name == "bandwidth-gbs" && p.v == 0) {
			err = fmt.Errorf("-%s %g: want a finite number, at least 0 (bandwidth: above 0)", p.name, p.v)
		}
	}
	if err == nil {
		var rs []int
		if rs, err = rankCounts(rankList); err == nil && !ranksSet {
			rs = fitting(rs, sc) // the default counts: those each mesh can take
		}
		if err == nil {
			stdout := &regfile.ErrWriter{W: os.Stdout}
			if err = run(stdout, sc, rs, strings.Split(*parts, ","), m, sp); err == nil && stdout.Err() != nil {
				err = fmt.Errorf("writing standard output: %w", stdout.Err())
			}
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
		if err != nil || !(v > 0) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("%q is not a positive number", f)
		}
		out = append(out, v)
	}
	return out, nil
}

// rankCounts parses -ranks: comma-separated whole numbers of ranks, at
// least 1 (run bounds them by the meshes' cells).
func rankCounts(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || v < 1 {
			return nil, fmt.Errorf("-ranks %q: %q is not a whole number of ranks, at least 1", s, f)
		}
		out = append(out, v)
	}
	return out, nil
}

// partitioners are the partitioners the model lays the mesh out with
// (dist.Partitioning's kinds that need nothing but the mesh).
var partitioners = []string{"block", "rcb", "metis"}

// fitting returns the rank counts of rs no larger than the cells of
// every mesh of scales, or rs when none is (check then says why).
func fitting(rs []int, scales []float64) []int {
	var out []int
	for _, r := range rs {
		fits := true
		for _, scale := range scales {
			ni, nj := meshSize(scale)
			fits = fits && r <= 3*ni*nj
		}
		if fits {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return rs
	}
	return out
}

// check refuses, before any work, a partitioner run does not know and a
// number of ranks larger than a mesh's cells (each rank must own some:
// a layout's cost grows with the ranks, whatever the mesh).
func check(scales []float64, rankCounts []int, parts []string) error {
	for _, p := range parts {
		if !slices.Contains(partitioners, p) {
			return fmt.Errorf("-partitioners: unknown partitioner %q (%s)", p, strings.Join(partitioners, ", "))
		}
	}
	for _, scale := range scales {
		// mesh.Generate numbers nodes and edges with int32 indices: its
		// (3I+1)(J+1) nodes and about 6IJ edges must fit.
		f := math.Sqrt(scale)
		fi, fj := math.Round(400*f), math.Round(600*f)
		if (3*fi+1)*(fj+1) > math.MaxInt32 || 6*fi*fj > math.MaxInt32 {
			return fmt.Errorf("-scale %g: the mesh would have %.3g cells, too many for int32 indices of its nodes and edges", scale, 3*fi*fj)
		}
		ni, nj := meshSize(scale)
		cells := 3 * ni * nj
		if cells == 0 {
			return fmt.Errorf("-scale %g: the mesh would have no cells", scale)
		}
		for _, r := range rankCounts {
			if r > cells {
				return fmt.Errorf("-ranks %d: more ranks than the %d cells of the %g× mesh (-scale)", r, cells, scale)
			}
		}
	}
	return nil
}

// meshSize is the I×J of Airfoil's generated mesh scaled by scale: it
// has 3·I·J cells.
func meshSize(scale float64) (ni, nj int) {
	f := math.Sqrt(scale)
	return int(math.Round(400 * f)), int(math.Round(600 * f))
}

// Set and map indices of the Airfoil mesh in dist form.
const (
	nodes, edges, bedges, cells = 0, 1, 2, 3
	pecell                      = 1
)

// airfoilMesh is Airfoil's mesh with I×J scaled by scale (cells ∝ scale).
func airfoilMesh(scale float64) (*mesh.Mesh, *dist.Mesh, error) {
	m, err := mesh.Generate(meshSize(scale))
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
	if err := check(scales, rankCounts, partitioners); err != nil {
		return err
	}
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
