package op2_test

import (
	"slices"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// devHaloKernels are TestDeviceHalosOnRanks' loops: spread increments
// two node Dats through an edge map from two others read through it;
// step rewrites those two directly, which makes their halos stale.
// Every value stays an integer or a short binary fraction, so the
// results are exact whatever the order of the increments.
var (
	devHaloSpread = op2.NewKernel(`void dh_spread(const int *q0, const int *q1, const double *w0, const double *w1,
                 int *r0, int *r1, double *s0, double *s1) {
  for (int k = 0; k < 3; k++) { r0[k] += q1[k] - q0[k]; r1[k] += q0[k] - q1[k] + 1; }
  s0[0] += w1[1]; s0[1] += 2 * w1[0]; s1[0] += w0[0]; s1[1] += w0[1] - 1;
}`, "dh_spread")
	devHaloStep = op2.NewKernel(`void dh_step(int *q, double *w, int *r, double *s) {
  for (int k = 0; k < 3; k++) { q[k] = q[k] / 2 + r[k]; r[k] = 0; }
  w[0] = 0.5 * s[0]; w[1] = 0.25 * s[1] + 1; s[0] = 0; s[1] = 0;
}`, "dh_step")
)

// TestDeviceHalosOnRanks runs on 2 ranks, with each device layout and scheme:
// on every device backend that opens, a loop sequence whose halos go
// stale each iteration gives sequential's results exactly, and the
// exchanges move only halo rows between host and device: the bytes
// downloaded are the bytes sent, not whole Dats (the rows are gathered
// and scattered on the device, and travel between host and device in
// one copy each way per exchange). Where the MPI library takes device
// memory (OP2_GPU_DIRECT), every message is device memory and nothing
// is copied.
func TestDeviceHalosOnRanks(t *testing.T) {
	if !mpitest.InRanks() {
		if !slices.ContainsFunc(allBackends, isDevice) {
			for _, b := range deviceBackends {
				needBackend(t, b) // skips, or fails under OP2_REQUIRE
			}
			return
		}
		// The schemes: staged runs the plan's blocks, the halo's in a
		// pass of their own; atomics runs without a plan, by ranges.
		for _, c := range []struct{ layout, scheme string }{{"aos", "staged"}, {"soa", "staged"}, {"soa", "atomics"}} {
			t.Run(c.layout+"/"+c.scheme, func(t *testing.T) {
				mpiRun(t, 2, 3*time.Minute, "OP2_MPI_TIMEOUT=60s", "OP2_DEVICE_LAYOUT="+c.layout, "OP2_DEVICE_SCHEME="+c.scheme,
					"OP2_TEST_CACHE_DIR="+t.TempDir())
			})
		}
		return
	}
	const n, iters, warm = 96, 6, 2
	rank, total := op2.Rank(), n*op2.Ranks()
	nodes := must(op2.NewSet(n, "nodes"))
	edges := must(op2.NewSet(n, "edges"))
	var tab []int32
	for i := rank * n; i < (rank+1)*n; i++ {
		j := (i + 3) % total
		if i%8 == 0 {
			j = (37*i + 11) % total // some neighbours scattered over the ranks
		}
		tab = append(tab, int32(i), int32(j))
	}
	emap := must(op2.NewMap(edges, nodes, 2, tab, "scatter"))
	type dats struct {
		q, r *op2.Dat[int32]
		w, s *op2.Dat[float64]
	}
	declare := func(tag string) dats {
		qv, wv := make([]int32, 3*n), make([]float64, 2*n)
		for i := range n {
			g := rank*n + i
			qv[3*i], qv[3*i+1], qv[3*i+2] = int32(g), int32(2*g+1), int32(g%5)
			wv[2*i], wv[2*i+1] = float64(g%7), float64(g)/4
		}
		return dats{q: must(op2.NewDat(nodes, 3, qv, "q"+tag)), r: must(op2.NewDat[int32](nodes, 3, nil, "r"+tag)),
			w: must(op2.NewDat(nodes, 2, wv, "w"+tag)), s: must(op2.NewDat[float64](nodes, 2, nil, "s"+tag))}
	}
	want := declare("seq")
	var devices []string
	got := map[string]dats{}
	for _, b := range allBackends {
		if isDevice(b) {
			devices = append(devices, b)
			got[b] = declare(b)
		}
	}
	must(op2.Partition(op2.BlockPartitioner()))
	run := func(d dats, count int) {
		for range count {
			check(t, op2.ParLoop(devHaloSpread, edges, d.q.ArgMap(op2.Read, emap, 0), d.q.ArgMap(op2.Read, emap, 1),
				d.w.ArgMap(op2.Read, emap, 0), d.w.ArgMap(op2.Read, emap, 1),
				d.r.ArgMap(op2.Inc, emap, 0), d.r.ArgMap(op2.Inc, emap, 1), d.s.ArgMap(op2.Inc, emap, 0), d.s.ArgMap(op2.Inc, emap, 1)))
			check(t, op2.ParLoop(devHaloStep, nodes, d.q.Arg(op2.RW), d.w.Arg(op2.RW), d.r.Arg(op2.RW), d.s.Arg(op2.RW)))
		}
	}
	check(t, op2.Use("sequential"))
	run(want, warm+iters)
	for _, device := range devices {
		check(t, op2.Use(device))
		run(got[device], warm)
		before, halo0 := op2.ReadStats(), op2.ReadHaloStats()
		run(got[device], iters)
		after, halo1 := op2.ReadStats(), op2.ReadHaloStats()
		down, up, sent := after.DownloadBytes-before.DownloadBytes, after.UploadBytes-before.UploadBytes, halo1.Bytes-halo0.Bytes
		whole := uint64(n * (3*4 + 2*8))
		t.Logf("rank %d, %s: %d iterations downloaded %d bytes and uploaded %d; %d halo bytes sent; the two Dats exchanged take %d bytes",
			rank, device, iters, down, up, sent, whole)
		if sent == 0 {
			t.Fatalf("rank %d: no halo bytes sent: the mesh does not exercise the exchange", rank)
		}
		if direct := halo1.DeviceMessages - halo0.DeviceMessages; direct > 0 {
			// The MPI library takes device memory (OP2_GPU_DIRECT):
			// the rows never pass through the host.
			t.Logf("rank %d, %s: %d of %d messages were device memory", rank, device, direct, halo1.Messages-halo0.Messages)
			if direct != halo1.Messages-halo0.Messages || down != 0 || up != 0 {
				t.Errorf("rank %d, %s: %d of %d messages device memory, %d bytes downloaded and %d uploaded; want all, 0 and 0",
					rank, device, direct, halo1.Messages-halo0.Messages, down, up)
			}
		} else {
			if down != uint64(sent) {
				t.Errorf("rank %d, %s: %d bytes downloaded for %d halo bytes sent: the exchange should download exactly the rows it sends", rank, device, down, sent)
			}
			if n := after.Downloads - before.Downloads; n != iters {
				t.Errorf("rank %d, %s: %d copies from the device in %d iterations: each exchange of both Dats' rows should be one", rank, device, n, iters)
			}
			if up == 0 || up >= uint64(iters)*whole/2 {
				t.Errorf("rank %d, %s: %d bytes uploaded in %d iterations: the exchange should upload the halo rows only (%d bytes a Dat pair)", rank, device, up, iters, whole)
			}
		}
		check(t, op2.Use("sequential"))
		g := got[device]
		for k, pair := range [][2]*op2.Dat[int32]{{g.q, want.q}, {g.r, want.r}} {
			if g, w := must(pair[0].Gather()), must(pair[1].Gather()); !slices.Equal(g, w) {
				t.Errorf("rank %d, %s: int Dat %d differs from sequential:\n got %v\nwant %v", rank, device, k, g, w)
			}
		}
		for k, pair := range [][2]*op2.Dat[float64]{{g.w, want.w}, {g.s, want.s}} {
			if g, w := must(pair[0].Gather()), must(pair[1].Gather()); !slices.Equal(g, w) {
				t.Errorf("rank %d, %s: float Dat %d differs from sequential:\n got %v\nwant %v", rank, device, k, g, w)
			}
		}
	}
	check(t, op2.Finalize())
}
