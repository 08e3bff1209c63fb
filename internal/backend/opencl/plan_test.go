package opencl

import (
	"strings"
	"testing"

	"github.com/goop2/op2/internal/codegen/device"
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
	cl "github.com/goop2/op2/internal/opencl"
)

func loop(t *testing.T, src, name string, set *core.Set, args ...core.Arg) *core.Loop {
	t.Helper()
	info, err := core.ParseKernel(src, name)
	if err != nil {
		t.Fatal(err)
	}
	l := &core.Loop{Kernel: &core.Kernel{Name: name, Source: src, Info: info, ID: core.NewID()}, Set: set, Args: args}
	l.Sig = core.Analyse(l)
	return l
}

// TestPlanThatCannotFitIsRefused: when one element's staged data exceeds
// the device's local memory, the loop is refused with an error naming the
// dats and the limit.
func TestPlanThatCannotFitIsRefused(t *testing.T) {
	edges := &core.Set{Name: "edges", Core: 2, Owned: 2, Exec: 2, Total: 2, ID: core.NewID()}
	nodes := &core.Set{Name: "nodes", Core: 200, Owned: 200, Exec: 200, Total: 200, ID: core.NewID()}
	tab := make([]int32, 200)
	for i := range tab {
		tab[i] = int32(i)
	}
	m := &core.Map{Name: "wide", From: edges, To: nodes, Arity: 100, Table: tab, ID: core.NewID()}
	x := &core.Storage{Name: "x", Type: core.Float64, Dim: 4, Set: nodes, Len: 800, ID: core.NewID()}
	l := loop(t, "void k(double **x) { }", "k", edges, core.Arg{Data: x, Map: m, Idx: -1, Access: core.Read, Kind: core.ArgVector})
	b := &backend{ctx: &cl.Context{Device: cl.Device{Name: "tiny", LocalMem: 4096}}}
	lay, err := device.Analyse(device.OpenCL, l, b.ctx.Device.LocalMem)
	if err != nil {
		t.Fatal(err)
	}
	needs := exec.PlanNeeds{SharedBudget: device.StagingBudget(l, lay.Reductions, b.ctx.Device.LocalMem), TooLarge: b.tooLarge(lay)}
	_, err = exec.ChoosePlan(l, &needs, 0, true)
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{"does not fit", `dat "x" (float64, dim 4)`, "4096 bytes", `"tiny"`} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q does not mention %q", err, w)
		}
	}
}
