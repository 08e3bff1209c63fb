package mgcfd

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
)

// mpiReference is what one process computes, for the ranks to compare.
type mpiReference struct {
	RMS  []float64
	Vars [][]float64
}

// TestMPI runs the cycle on 2 ranks (rcb) and, in the full run, 3 ranks
// (block partition) and, where opencl and cuda work, 2 ranks running each
// (the flux kernels' own double3 renamed in the device code; the halo rows
// gathered and scattered on the device), and checks each
// cycle's rms and every level's variables, gathered on rank 0, against
// one process's on sequential.
func TestMPI(t *testing.T) {
	m, err := Generate(9, 3)
	if err != nil {
		t.Fatal(err)
	}
	const cycles = 3
	if mpitest.InRanks() {
		b, err := os.ReadFile(os.Getenv("MGCFD_REFERENCE"))
		if err != nil {
			t.Fatal(err)
		}
		var want mpiReference
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if err := op2.Configure(op2.Config{Backend: os.Getenv("MGCFD_BACKEND")}); err != nil {
			t.Fatal(err)
		}
		s, info, err := NewDistributed(m, os.Getenv("MGCFD_PARTITIONER"))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("rank %d of %d: %s, %s partition", op2.Rank(), op2.Ranks(), op2.Backend(), info.Partitioner)
		if info.Ranks != op2.Ranks() || op2.Ranks() < 2 {
			t.Fatalf("partitioned over %d ranks of %d", info.Ranks, op2.Ranks())
		}
		rms, _, err := s.Run(cycles, nil)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want.RMS {
			if !near(rms[i], want.RMS[i], 1e-10) {
				t.Errorf("rank %d: cycle %d: rms %.17g, one process %.17g", op2.Rank(), i+1, rms[i], want.RMS[i])
			}
		}
		for l := range want.Vars {
			v, err := s.Variables(l)
			if err != nil {
				t.Fatal(err)
			}
			if op2.Rank() != 0 {
				continue
			}
			scale := 0.0
			for _, x := range want.Vars[l] {
				scale = math.Max(scale, math.Abs(x))
			}
			for i := range want.Vars[l] {
				if math.Abs(v[i]-want.Vars[l][i]) > 1e-12*scale {
					t.Fatalf("level %d: variable %d = %.17g on %d ranks, %.17g on one", l, i, v[i], op2.Ranks(), want.Vars[l][i])
				}
			}
		}
		s.Close()
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		t.Fatal(err)
	}
	rms, vars := solve(t, m, cycles)
	b, err := json.Marshal(mpiReference{rms, vars})
	if err != nil {
		t.Fatal(err)
	}
	ref := filepath.Join(t.TempDir(), "reference.json")
	if err := os.WriteFile(ref, b, 0o644); err != nil {
		t.Fatal(err)
	}
	mpitest.Run(t, 2, 2*time.Minute, "MGCFD_REFERENCE="+ref, "MGCFD_PARTITIONER=rcb", "MGCFD_BACKEND=sequential")
	if testing.Short() {
		return
	}
	mpitest.Run(t, 3, 2*time.Minute, "MGCFD_REFERENCE="+ref, "MGCFD_PARTITIONER=block", "MGCFD_BACKEND=sequential")
	for _, backend := range []string{"opencl", "cuda"} {
		t.Run(backend, func(t *testing.T) {
			err := op2.Configure(op2.Config{Backend: backend})
			if cerr := op2.Configure(op2.Config{Backend: "sequential"}); cerr != nil {
				t.Fatal(cerr)
			}
			if err != nil {
				testreq.Check(t, backend, err, op2.ErrBackendUnavailable) // skipped, or failed under OP2_REQUIRE
				return
			}
			mpitest.Run(t, 2, 3*time.Minute, "MGCFD_REFERENCE="+ref, "MGCFD_PARTITIONER=rcb", "MGCFD_BACKEND="+backend)
		})
	}
}
