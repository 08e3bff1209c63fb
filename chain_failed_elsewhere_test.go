package op2_test

import (
	"strings"
	"sync"
	"testing"

	op2 "github.com/goop2/op2"
)

// TestChainReturnsFailuresForcedElsewhere: a loop recorded in a Chain
// whose run fails (a check mode finding) when another goroutine forces
// the queue (an accessor of other data, a loop of an eager runtime, a
// loop of a lazy runtime that finds the queue full) is
// named by that Chain's error too: it returned nil, the failure going
// only to the call that forced it.
func TestChainReturnsFailuresForcedElsewhere(t *testing.T) {
	bad := op2.NewKernel("void fe_bad(const double *x, double *y) { ((double *)x)[0] = -1; *y = 1; }", "fe_bad")
	inc := op2.NewKernel("void fe_inc(double *z) { *z += 1; }", "fe_inc")
	y := must(op2.NewDat(must(op2.NewSet(10, "fe_other")), 1, make([]float64, 10), "fe_y"))
	eager := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential"}.Explicit("Lazy"))))
	lazy := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential", Lazy: true})))
	eset := must(op2.NewSet(10, "fe_eager"))
	z := must(op2.NewDat(eset, 1, make([]float64, 10), "fe_z"))
	for _, c := range []struct {
		name  string
		force func() error // from another goroutine, on other data
	}{
		{"accessor", func() error {
			_, err := y.DataROErr()
			return err
		}},
		{"eager-loop", func() error { return eager.ParLoop(inc, eset, z.Arg(op2.RW)) }},
		{"full-queue", func() error { // a lazy runtime's loop that finds the queue full
			var err error
			for i := 0; i < op2.MaxRecordedLoops && err == nil; i++ {
				err = lazy.ParLoop(inc, eset, z.Arg(op2.RW))
			}
			return err
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := closeAtEnd(t, must(op2.NewRuntime(op2.Config{Backend: "sequential", Check: true})))
			set := must(op2.NewSet(10, "fe_cells"))
			x := must(op2.NewDat(set, 1, make([]float64, 10), "fe_x"))
			y := must(op2.NewDat(set, 1, make([]float64, 10), "fe_yb"))
			recorded, forced := make(chan struct{}), make(chan struct{})
			var chainErr, forceErr error
			var wg sync.WaitGroup
			wg.Add(2)
			go func() {
				defer wg.Done()
				chainErr = r.Chain(func() error {
					if err := r.ParLoop(bad, set, x.Arg(op2.Read), y.Arg(op2.Write)); err != nil {
						return err
					}
					close(recorded)
					<-forced
					return nil
				})
			}()
			go func() {
				defer wg.Done()
				<-recorded
				forceErr = c.force()
				close(forced)
			}()
			wg.Wait()
			if forceErr == nil || !strings.Contains(forceErr.Error(), `"fe_bad"`) {
				t.Fatalf("the call that forced the chain's loop: %v; want its failure (the test shows nothing)", forceErr)
			}
			if chainErr == nil || !strings.Contains(chainErr.Error(), `"fe_bad"`) || !strings.Contains(chainErr.Error(), `READ dat "fe_x"`) {
				t.Errorf("Chain: %v; want the failure of its loop fe_bad", chainErr)
			}
		})
	}
}
