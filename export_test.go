package op2

import (
	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// SetMaxPrograms lowers the program cache's capacity for a test and
// returns a function that restores it.
func SetMaxPrograms(n int) (restore func()) {
	mu.Lock()
	defer mu.Unlock()
	old := rt.x.MaxPrograms()
	rt.x.SetMaxPrograms(n)
	return func() {
		mu.Lock()
		defer mu.Unlock()
		rt.x.SetMaxPrograms(old)
	}
}

// HaloExchanges is the number of Dat halo exchanges started so far.
func HaloExchanges() int {
	mu.Lock()
	defer mu.Unlock()
	if rt.dist.job == nil {
		return 0
	}
	return rt.dist.job.Halo().Exchanges()
}

// DropHaloSends makes this rank post no halo sends, as a rank that has
// stopped would (tests of OP2_MPI_TIMEOUT).
func DropHaloSends(on bool) {
	mu.Lock()
	defer mu.Unlock()
	if rt.dist.job != nil {
		rt.dist.job.Halo().DropSends = on
	}
}

// OnLaunch calls f before every launch of r's loops with the iteration
// set's name and the launched range (block colours when colours is set).
func OnLaunch(r *Runtime, f func(set string, first, last int, colours bool)) {
	mu.Lock()
	defer mu.Unlock()
	r.x.OnLaunch = func(l *core.Loop, rg exec.Range) { f(l.Set.Name, rg.First, rg.Last, rg.Colours) }
}
