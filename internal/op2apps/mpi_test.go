package op2apps

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/mesh"
)

// mpiApps are the ports TestMPI runs on several ranks, each with the
// partitioner OP2's MPI build uses where it has one (jac1/longint:
// ParMETIS on its coordinates, here RCB; min: RANDOM) and a random one
// elsewhere, so that halos cross ranks everywhere. Each runs in its own
// job: op2.Partition distributes every set a process declared.
var mpiApps = []struct {
	name string
	run  func(t *testing.T)
}{
	{"jac1-dp", func(t *testing.T) { mpiJac(t, Jac1DP) }},
	{"jac1-sp", func(t *testing.T) { mpiJac(t, Jac1SP) }},
	{"jac1-longint", func(t *testing.T) { mpiJac(t, Jac1Longint) }},
	{"jac2", func(t *testing.T) { mpiJac(t, Jac2) }},
	{"reduction", func(t *testing.T) {
		var m *mesh.Mesh
		if op2.Rank() == 0 {
			var err error
			if m, err = mesh.Generate(ReductionI, ReductionJ); err != nil {
				t.Fatal(err)
			}
		}
		r, err := RunReduction(m, RandomOwner(3))
		if err != nil {
			t.Fatal(err)
		}
		compareReduction(t, r)
	}},
	{"min-direct", func(t *testing.T) { mpiMin(t, false) }},
	{"min-indirect", func(t *testing.T) { mpiMin(t, true) }},
	{"aero", func(t *testing.T) {
		var m *AeroMesh
		if op2.Rank() == 0 {
			var err error
			if m, err = ChannelBump(AeroNI, AeroNJ); err != nil {
				t.Fatal(err)
			}
		}
		steps, err := RunAero(m, RCB)
		if err != nil {
			t.Fatal(err)
		}
		compareAero(t, steps)
	}},
}

func mpiJac(t *testing.T, v JacVariant) {
	p := RandomOwner(5)
	file := jacOutputs[v]
	if v == Jac1Longint {
		p = RCB
		file = fmt.Sprintf("longint_np%d.txt", op2.Ranks())
	}
	r, err := RunJac(v, jacNN, p)
	if err != nil {
		t.Fatal(err)
	}
	compareJac(t, v, jacNN, r, file, op2.Rank() == 0)
}

func mpiMin(t *testing.T, indirect bool) {
	r, err := RunMin(indirect, op2.Backend() == "opencl", RandomOwner(7))
	if err != nil {
		t.Fatal(err)
	}
	compareMin(t, indirect, r, op2.Rank() == 0)
}

// Beyond 2 ranks on sequential, TestMPI runs some ports on 3 ranks on
// openmp (onThree) and on 2 on opencl (onOpenCL: the halo rows of device
// copies gathered and scattered on the device), a few for the test's time.
// With -short only those in inShort run, on 2 ranks.
var (
	inShort  = map[string]bool{"jac1-dp": true, "jac1-longint": true, "aero": true}
	onThree  = map[string]bool{"jac1-dp": true, "jac1-longint": true, "min-indirect": true, "aero": true}
	onOpenCL = map[string]bool{"jac2": true, "aero": true}
)

// TestMPI runs each port (with -short, those in inShort) on 2 ranks
// (sequential, lazy) and, unless -short,
// those in onThree on 3 ranks (openmp, loops at once) and those in
// onOpenCL, where opencl is installed, on 2 ranks on opencl (lazy); and
// compares each with what
// OP2's sequential build printed (jac1/longint: its MPI build on as many
// ranks).
func TestMPI(t *testing.T) {
	for _, app := range mpiApps {
		if testing.Short() && !mpitest.InRanks() && !inShort[app.name] {
			continue // an MPI job each: -short runs those in inShort
		}
		t.Run(app.name, func(t *testing.T) {
			if mpitest.InRanks() {
				configure(t, runConfig{backend: os.Getenv("OP2APPS_BACKEND"), lazy: os.Getenv("OP2APPS_LAZY") == "1"})
				t.Logf("rank %d of %d on %s", op2.Rank(), op2.Ranks(), op2.Backend())
				app.run(t)
				if err := op2.Finalize(); err != nil {
					t.Fatal(err)
				}
				return
			}
			mpitest.Run(t, 2, time.Minute, "OP2APPS_BACKEND=sequential", "OP2APPS_LAZY=1")
			if testing.Short() {
				return
			}
			if onThree[app.name] {
				mpitest.Run(t, 3, time.Minute, "OP2APPS_BACKEND=openmp", "OP2APPS_LAZY=0")
			}
			if !onOpenCL[app.name] {
				return
			}
			t.Run("opencl", func(t *testing.T) {
				configure(t, runConfig{backend: "opencl"}) // skips without opencl
				configure(t, runConfig{backend: "sequential"})
				mpitest.Run(t, 2, time.Minute, "OP2APPS_BACKEND=opencl", "OP2APPS_LAZY=1")
			})
		})
	}
}
