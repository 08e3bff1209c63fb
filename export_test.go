package op2

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// SetMaxPrograms lowers the program cache's capacity for a test and
// returns a function that restores it.
func SetMaxPrograms(n int) (restore func()) {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	old := rt.e.X.MaxPrograms()
	rt.e.X.SetMaxPrograms(n)
	return func() {
		rt.proc.Lock(forNoData, "test")
		defer rt.proc.Unlock()
		rt.e.X.SetMaxPrograms(old)
	}
}

// OrderAnswers is the number of fused loops' order answers r's executor
// keeps.
func OrderAnswers(r *Runtime) int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	return r.e.X.OrderAnswers()
}

// HaloExchanges is the number of Dat halo exchanges started so far.
func HaloExchanges() int {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	if rt.proc.Job() == nil {
		return 0
	}
	return rt.proc.Job().Halo().Exchanges()
}

// DropHaloSends makes this rank post no halo sends, as a rank that has
// stopped would (tests of OP2_MPI_TIMEOUT).
func DropHaloSends(on bool) {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	if rt.proc.Job() != nil {
		rt.proc.Job().Halo().DropSends = on
	}
}

// OnLaunch calls f before every launch of r's loops with the iteration
// set's name and the launched range (block colours when colours is set).
func OnLaunch(r *Runtime, f func(set string, first, last int, colours bool)) {
	rt.proc.Lock(forNoData, "test")
	defer rt.proc.Unlock()
	r.e.X.OnLaunch = func(l *core.Loop, rg exec.Range) { f(l.Set.Name, rg.First, rg.Last, rg.Colours) }
}
