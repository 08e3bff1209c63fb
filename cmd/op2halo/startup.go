package main

import (
	"fmt"
	"io"
	"math"

	"github.com/goop2/op2/internal/dist"
	"github.com/goop2/op2/mesh"
)

// startupCosts are the start-up model's compute costs on one core, in
// nanoseconds, and the process's memory before the mesh.
type startupCosts struct {
	readParseNs float64 // per line of the ASCII file in the rank's block (parsed)
	readSkipNs  float64 // per line of the whole file (every rank reads it through)
	rcbNs       float64 // per coordinate of the rank's block and bisection level
	queryNs     float64 // per map entry of the rank's block whose target's owner it asks
	migrateNs   float64 // per map entry of the rank's block (destinations, cut, records)
	layoutNs    float64 // per map entry of the rank's local mesh
	valuesNs    float64 // per byte of dat values the rank ends with
	baseMB      float64 // resident memory of a rank before the mesh
}

// datSpec is a dat that Partition moves: its set and bytes per element.
type datSpec struct {
	set, elem int
}

// airfoilDats are Airfoil's dats: x on the nodes, q, qold, res and adt on
// the cells, bound on the boundary edges.
var airfoilDats = []datSpec{{nodes, 16}, {cells, 32}, {cells, 32}, {cells, 32}, {cells, 8}, {bedges, 4}}

// startupPhases are the steps of the start-up, in order.
var startupPhases = []string{"read", "partition", "migrate", "layout", "values"}

// startupCost is the modelled start-up on one number of ranks: per phase,
// the slowest rank's seconds and the largest rank's peak bytes; the
// most network bytes a rank receives in all; the largest final part.
type startupCost struct {
	seconds [5]float64
	peak    [5]float64
	in      float64
	final   float64
}

// traffic is one all-to-all exchange (dist's Comm.Alltoallv): bytes from
// rank to rank.
type traffic struct {
	ranks int
	b     []float64 // b[from*ranks+to]
}

func newTraffic(ranks int) *traffic { return &traffic{ranks, make([]float64, ranks*ranks)} }

func (t *traffic) add(from, to int, bytes float64) { t.b[from*t.ranks+to] += bytes }

// exchange accumulates the exchanges of one phase.
type exchange struct {
	m       model
	ranks   int
	seconds float64   // network time of the exchanges so far
	in      []float64 // per rank, network bytes received so far
}

// countsSeconds is the all-to-all of the message sizes that precedes
// every exchange (internal/mpi's Alltoallv): 8 bytes from each rank to
// each, by Bruck's algorithm (log2 ranks steps of half the counts).
func (x *exchange) countsSeconds() float64 {
	r := float64(x.ranks)
	if x.ranks == 1 {
		return 0
	}
	steps := math.Ceil(math.Log2(r))
	return steps*x.m.latencyUs*1e-6 + steps*4*r/(x.m.bandwidthGBs*1e9)
}

// allreduce adds an MPI_Allreduce of n bytes (dist's reductions through
// dist.Reducer): recursive doubling, log2 ranks steps of n bytes.
func (x *exchange) allreduce(n float64) {
	if x.ranks == 1 {
		return
	}
	steps := math.Ceil(math.Log2(float64(x.ranks)))
	x.seconds += steps * (x.m.latencyUs*1e-6 + n/(x.m.bandwidthGBs*1e9))
	for r := range x.in {
		x.in[r] += steps * n
	}
}

// do adds one exchange: its time is the sizes' allgather plus the slowest
// rank's latency per message in and out and bytes in and out over its
// port (messages to itself are copies, free).
func (x *exchange) do(t *traffic) {
	n := x.ranks
	worst := 0.0
	for r := 0; r < n; r++ {
		msgs, bytes := 0, 0.0
		for q := 0; q < n; q++ {
			if q == r {
				continue
			}
			if b := t.b[r*n+q]; b > 0 {
				msgs++
				bytes += b
			}
			if b := t.b[q*n+r]; b > 0 {
				msgs++
				bytes += b
				x.in[r] += b
			}
		}
		worst = math.Max(worst, float64(msgs)*x.m.latencyUs*1e-6+bytes/(x.m.bandwidthGBs*1e9))
	}
	x.seconds += x.countsSeconds() + worst
}

// allgather adds an exchange in which every rank sends n bytes to every
// rank (dist's agreements, and the counts that begin the migration of a
// set or a dat's values).
func (x *exchange) allgather(n float64) {
	t := newTraffic(x.ranks)
	for r := range x.ranks {
		for q := range x.ranks {
			t.add(r, q, n)
		}
	}
	x.do(t)
}

// startupMesh is what the start-up model needs of a laid-out mesh.
type startupMesh struct {
	d       *dist.Mesh
	dats    []datSpec
	owner   [][]int32
	locals  []dist.Local
	ranks   int
	kind    string // partitioner
	given   int    // the set the partitioner gives owners to (rcb, metis)
	mapPart int    // metis: the map whose graph is partitioned
	coord   int    // rcb: coordinates per element
	metisS  float64
}

// blockOf is mesh.Block's block of set s on rank r.
func (sm *startupMesh) blockOf(s, r int) (first, n int) {
	return mesh.Block(sm.d.Sets[s].Size, r, sm.ranks)
}

// home is the rank whose declared block holds element g of a set of n
// elements (mesh.Block's split).
func home(g, n, ranks int) int {
	q, rem := n/ranks, n%ranks
	if g < rem*(q+1) {
		return g / (q + 1)
	}
	return rem + (g-rem*(q+1))/q
}

// recSize is dist's record of an element of set s: global number, kind
// and owner, then the rows of the maps from s.
func (sm *startupMesh) recSize(s int) int {
	n := 8
	for _, mp := range sm.d.Maps {
		if mp.From == s {
			n += 4 * mp.Arity
		}
	}
	return n
}

// spreadSteps is the order in which dist's propagate gives the sets
// their owners from the set given: per step the map and whether the
// source set takes its owners from the targets (else the target set from
// votes of the sources).
func spreadSteps(d *dist.Mesh, given int) (steps []int, fromTargets []bool) {
	done := make([]bool, len(d.Sets))
	gen := make([]int, len(d.Sets))
	if given < 0 {
		return nil, nil
	}
	done[given] = true
	for round := 1; ; round++ {
		changed := false
		for i, mp := range d.Maps {
			if done[mp.From] || !done[mp.To] || mp.Arity == 0 {
				continue
			}
			done[mp.From], gen[mp.From], changed = true, round, true
			steps, fromTargets = append(steps, i), append(fromTargets, true)
		}
		if changed {
			continue
		}
		best := -1
		for i, mp := range d.Maps {
			if !done[mp.From] || done[mp.To] {
				continue
			}
			if best < 0 || gen[mp.From] < gen[d.Maps[best].From] {
				best = i
			}
		}
		if best < 0 {
			return steps, fromTargets
		}
		done[d.Maps[best].To], gen[d.Maps[best].To] = true, round
		steps, fromTargets = append(steps, best), append(fromTargets, false)
	}
}

// ownerQuery is the exchange pair of dist's targetOwners for map mi: each
// rank asks the ranks holding the distinct targets of its block's rows for
// their owners (4 bytes each way).
func (sm *startupMesh) ownerQuery(x *exchange, mi int) {
	mp := sm.d.Maps[mi]
	n := sm.d.Sets[mp.To].Size
	req := newTraffic(sm.ranks)
	stamp := make([]int32, n)
	for r := range sm.ranks {
		first, cnt := sm.blockOf(mp.From, r)
		for _, g := range mp.Table[first*mp.Arity : (first+cnt)*mp.Arity] {
			if stamp[g] != int32(r+1) {
				stamp[g] = int32(r + 1)
				req.add(r, home(int(g), n, sm.ranks), 4)
			}
		}
	}
	x.do(req)
	x.do(transpose(req))
}

// transpose is the replies to t, byte for byte.
func transpose(t *traffic) *traffic {
	u := newTraffic(t.ranks)
	for r := range t.ranks {
		for q := range t.ranks {
			u.b[q*t.ranks+r] = t.b[r*t.ranks+q]
		}
	}
	return u
}

// model computes the start-up on sm.ranks ranks.
func (sm *startupMesh) model(m model, c startupCosts) startupCost {
	d, R := sm.d, sm.ranks
	var sc startupCost
	ns := 1e-9
	netIn := make([]float64, R) // per rank, network bytes received in all phases
	newX := func() *exchange { return &exchange{m: m, ranks: R, in: netIn} }
	// Per rank: block elements, entries, bytes.
	blk := make([][]int, len(d.Sets))
	for s := range d.Sets {
		blk[s] = make([]int, R)
		for r := range R {
			_, blk[s][r] = sm.blockOf(s, r)
		}
	}
	lines := 1.0
	for _, s := range d.Sets {
		lines += float64(s.Size)
	}
	entries := func(r int, maps []int) float64 {
		n := 0
		for _, mi := range maps {
			n += blk[d.Maps[mi].From][r] * d.Maps[mi].Arity
		}
		return float64(n)
	}
	allMaps := make([]int, len(d.Maps))
	for i := range allMaps {
		allMaps[i] = i
	}
	blockBytes := make([]float64, R)
	blockElems := make([]float64, R)
	for r := range R {
		blockBytes[r] = 4 * entries(r, allMaps)
		for _, dd := range sm.dats {
			blockBytes[r] += float64(blk[dd.set][r] * dd.elem)
		}
		for s := range d.Sets {
			blockElems[r] += float64(blk[s][r])
		}
	}
	base := c.baseMB * 1e6
	maxOver := func(f func(r int) float64) float64 {
		v := 0.0
		for r := range R {
			v = math.Max(v, f(r))
		}
		return v
	}

	// read: every rank passes over every line and parses its block's.
	sc.seconds[0] = maxOver(func(r int) float64 {
		return (c.readSkipNs*lines + c.readParseNs*blockElems[r]) * ns
	})
	sc.peak[0] = maxOver(func(r int) float64 { return base + blockBytes[r] })

	// partition: the block sizes and an agreement, then the partitioner,
	// then the spread through the maps.
	x := newX()
	x.allgather(8 * float64(len(d.Sets)))
	x.allgather(0)
	compute := make([]float64, R)
	extra := make([]float64, R) // partitioner's memory beyond block and owners
	queried := make([]bool, len(d.Maps))
	switch sm.kind {
	case "rcb":
		x.allgather(0) // checkCoords agreement
		parts := []int{R}
		levels := 0
		histPeak := 0.0
		for {
			na := 0
			var next []int
			for _, p := range parts {
				if p > 1 {
					na++
				}
				if p > 1 {
					next = append(next, p/2, p-p/2)
				} else {
					next = append(next, p)
				}
			}
			if na == 0 {
				break
			}
			levels++
			x.allreduce(8 * float64(na))           // counts
			x.allreduce(16 * float64(na*sm.coord)) // extents (a minimum and a maximum)
			for range 12 {                         // radix rounds
				x.allreduce(8 * 256 * float64(na))
			}
			// The histograms, the local one and its reduction.
			histPeak = math.Max(histPeak, 2*8*256*float64(na))
			parts = next
		}
		for r := range R {
			compute[r] = c.rcbNs * float64(blk[sm.given][r]*levels) * ns
			extra[r] = 12*float64(blk[sm.given][r]) + histPeak
		}
	case "metis":
		mp := d.Maps[sm.mapPart]
		gather := newTraffic(R)
		back := newTraffic(R)
		for r := range R {
			gather.add(r, 0, 4*float64(blk[mp.From][r]*mp.Arity))
			back.add(0, r, 4*float64(blk[mp.To][r])+4)
		}
		x.do(gather)
		x.allgather(0)
		x.do(back)
		compute[0] = sm.metisS
		// Rank 0: the gathered table, its copy and the graph.
		extra[0] = 8*float64(len(mp.Table)) + 4*float64(d.Sets[mp.To].Size+1) + 4*float64(len(mp.Table))
	}
	steps, fromT := spreadSteps(d, sm.given)
	for k, mi := range steps {
		mp := d.Maps[mi]
		if fromT[k] {
			sm.ownerQuery(x, mi)
			queried[mi] = true
			for r := range R {
				compute[r] += c.queryNs * float64(blk[mp.From][r]*mp.Arity) * ns
				extra[r] += 8 * float64(blk[mp.From][r]*mp.Arity)
			}
			continue
		}
		votes := newTraffic(R)
		n := d.Sets[mp.To].Size
		for r := range R {
			first, cnt := sm.blockOf(mp.From, r)
			for _, g := range mp.Table[first*mp.Arity : (first+cnt)*mp.Arity] {
				votes.add(r, home(int(g), n, R), 8)
			}
			compute[r] += c.queryNs * float64(cnt*mp.Arity) * ns
		}
		x.do(votes)
		for r := range R {
			for q := range R {
				extra[r] += votes.b[q*R+r]
			}
		}
	}
	sc.seconds[1] = maxOver(func(r int) float64 { return compute[r] }) + x.seconds
	ownerBytes := func(r int) float64 { return 4 * blockElems[r] }
	sc.peak[1] = maxOver(func(r int) float64 { return base + blockBytes[r] + ownerBytes(r) + extra[r] })

	// migrate: the remaining owner queries, the cut pairs per map of
	// arity 2 or more, their sum, then one exchange of records per set.
	x = newX()
	clear(compute)
	for mi, mp := range d.Maps {
		if !queried[mi] {
			sm.ownerQuery(x, mi)
			for r := range R {
				compute[r] += c.queryNs * float64(blk[mp.From][r]*mp.Arity) * ns
			}
		}
	}
	for _, mp := range d.Maps {
		if mp.Arity < 2 {
			continue
		}
		to := sm.owner[mp.To]
		n := d.Sets[mp.To].Size
		pairs := newTraffic(R)
		for r := range R {
			first, cnt := sm.blockOf(mp.From, r)
			for e := first; e < first+cnt; e++ {
				row := mp.Table[e*mp.Arity : (e+1)*mp.Arity]
				for _, a := range row {
					for _, b := range row {
						if a < b && to[a] != to[b] {
							pairs.add(r, home(int(a), n, R), 8)
						}
					}
				}
			}
		}
		x.do(pairs)
	}
	x.allreduce(8 * float64(1+len(d.Maps)))
	// Records: each element to every rank holding it in its owned or
	// exec-halo section.
	records := make([]*traffic, len(d.Sets))
	sent := make([][]float64, len(d.Sets)) // per set and rank: records sent (self included)
	recvRec := make([][]float64, len(d.Sets))
	for s := range d.Sets {
		t := newTraffic(R)
		sent[s] = make([]float64, R)
		recvRec[s] = make([]float64, R)
		n := d.Sets[s].Size
		for q := range R {
			ls := &sm.locals[q].Sets[s]
			for _, g := range ls.Global[:ls.Exec] {
				h := home(int(g), n, R)
				t.add(h, q, 1)
				sent[s][h]++
			}
			recvRec[s][q] = float64(ls.Exec)
		}
		records[s] = t
		x.allgather(8) // the rounds (dist's planRounds)
		x.allgather(8) // what each rank will receive (the counts of the rounds)
		scaled := newTraffic(R)
		for i, v := range t.b {
			scaled.b[i] = v * float64(sm.recSize(s))
		}
		x.do(scaled)
	}
	destBytes := func(r int) float64 {
		v := 4 * blockElems[r]
		for s := range d.Sets {
			v += 4 * sent[s][r]
		}
		return v
	}
	for r := range R {
		compute[r] += c.migrateNs * entries(r, allMaps) * ns
	}
	sc.seconds[2] = maxOver(func(r int) float64 { return compute[r] }) + x.seconds
	sc.peak[2] = maxOver(func(r int) float64 {
		v, maxSend := 0.0, 0.0
		for s := range d.Sets {
			v += recvRec[s][r] * float64(sm.recSize(s))
			maxSend = math.Max(maxSend, sent[s][r]*float64(sm.recSize(s)))
		}
		return base + blockBytes[r] + ownerBytes(r) + 4*entries(r, allMaps) + destBytes(r) + v + maxSend
	})

	// layout: the non-exec halo fetched per set, the exchange lists.
	x = newX()
	clear(compute)
	nonexec := make([]*traffic, len(d.Sets))
	for s := range d.Sets {
		req := newTraffic(R)
		n := d.Sets[s].Size
		for q := range R {
			ls := &sm.locals[q].Sets[s]
			for _, g := range ls.Global[ls.Exec:ls.Total] {
				req.add(q, home(int(g), n, R), 1)
			}
		}
		nonexec[s] = req
		scaled, reply := newTraffic(R), transpose(req)
		for i := range req.b {
			scaled.b[i] = 4 * req.b[i]
			reply.b[i] *= float64(sm.recSize(s))
		}
		x.do(scaled)
		x.do(reply)
	}
	lists := newTraffic(R)
	for q := range R {
		for p := range R {
			lists.add(q, p, 4*float64(len(d.Sets)))
		}
		for s := range d.Sets {
			ls := &sm.locals[q].Sets[s]
			for _, nb := range ls.Neighbours {
				lists.add(q, nb.Rank, 4*float64(nb.RecvExec[1]-nb.RecvExec[0]+nb.RecvNonexec[1]-nb.RecvNonexec[0]))
			}
		}
	}
	x.do(lists)
	localEntries := func(r int) float64 {
		n := 0
		for _, mp := range d.Maps {
			n += sm.locals[r].Sets[mp.From].Total * mp.Arity
		}
		return float64(n)
	}
	localElems := func(r int) float64 {
		n := 0
		for s := range d.Sets {
			n += sm.locals[r].Sets[s].Total
		}
		return float64(n)
	}
	localValues := func(r int) float64 {
		v := 0.0
		for _, dd := range sm.dats {
			v += float64(sm.locals[r].Sets[dd.set].Total * dd.elem)
		}
		return v
	}
	sc.seconds[3] = maxOver(func(r int) float64 { return c.layoutNs * localEntries(r) * ns }) + x.seconds
	sc.peak[3] = maxOver(func(r int) float64 {
		recs := 0.0
		for s := range d.Sets {
			recs += float64(sm.locals[r].Sets[s].Total * sm.recSize(s))
		}
		// records, local maps, Global + order + lookup (16 B per element)
		return base + blockBytes[r] + ownerBytes(r) + destBytes(r) + recs + 4*localEntries(r) + 16*localElems(r)
	})

	// values: per dat, the values as the records went, the non-exec halo
	// fetched again.
	x = newX()
	transient := make([]float64, R)
	for _, dd := range sm.dats {
		t, req, rep := newTraffic(R), newTraffic(R), transpose(nonexec[dd.set])
		for i, v := range records[dd.set].b {
			t.b[i] = v * float64(dd.elem)
			req.b[i] = 4 * nonexec[dd.set].b[i]
		}
		for i := range rep.b {
			rep.b[i] *= float64(dd.elem)
		}
		x.allgather(8) // what each rank will receive
		x.do(t)
		x.do(req)
		x.do(rep)
		for r := range R {
			ls := &sm.locals[r].Sets[dd.set]
			transient[r] = math.Max(transient[r], float64((int(sent[dd.set][r])+ls.Exec)*dd.elem))
		}
	}
	sc.seconds[4] = maxOver(func(r int) float64 { return c.valuesNs * localValues(r) * ns }) + x.seconds
	final := func(r int) float64 { return base + 4*localEntries(r) + 4*localElems(r) + localValues(r) }
	sc.peak[4] = maxOver(func(r int) float64 {
		return blockBytes[r] + destBytes(r) + 4*localElems(r) + final(r) + transient[r]
	})
	sc.in = maxOver(func(r int) float64 { return netIn[r] })
	sc.final = maxOver(final)
	return sc
}

// startupHeader starts the start-up table.
func startupHeader(out io.Writer, m model, c startupCosts) {
	fmt.Fprintf(out, "\nStart-up model (slowest rank per phase; peak: largest rank's modelled memory, %.0f MB base included): read %.0f ns/line parsed + %.0f ns/line passed over, RCB %.0f ns/coordinate/level, owner query %.0f ns/entry, migrate %.0f ns/entry, layout %.0f ns/local entry, values %.1f ns/byte; latency %.1f µs, bandwidth %.0f GB/s\n\n",
		c.baseMB, c.readParseNs, c.readSkipNs, c.rcbNs, c.queryNs, c.migrateNs, c.layoutNs, c.valuesNs, m.latencyUs, m.bandwidthGBs)
	fmt.Fprintln(out, "| ranks | partitioner | read s | partition s | migrate s | layout s | values s | total s | max MB in | peak MB (phase) | final MB |")
	fmt.Fprintln(out, "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
}

// print writes the start-up's row.
func (sc *startupCost) print(out io.Writer, ranks int, partitioner string) {
	total, peak, at := 0.0, 0.0, 0
	for i, s := range sc.seconds {
		total += s
		if sc.peak[i] > peak {
			peak, at = sc.peak[i], i
		}
	}
	fmt.Fprintf(out, "| %d | %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.1f | %.1f (%s) | %.1f |\n",
		ranks, partitioner, sc.seconds[0], sc.seconds[1], sc.seconds[2], sc.seconds[3], sc.seconds[4], total,
		sc.in/1e6, peak/1e6, startupPhases[at], sc.final/1e6)
}
