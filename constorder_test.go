package op2_test

import (
	"testing"

	"github.com/goop2/op2"
)

// constOrderSource defines two kernels; only the second reads the Const
// co_grav.
const constOrderSource = `
void co_scale(double *h) { *h = 2 * *h; }
void co_fall(double *u) { *u = *u - co_grav; }
`

// TestLoopBeforeItsConstNamesIt: a loop whose kernel source uses a Const
// not declared yet, in a function the loop's kernel does not call, fails
// with an error in GoOP2's words naming the loop, the kernel and the
// missing identifier, and saying to declare it with NewConst before the
// first loop that compiles the source; once it is declared, the loop
// runs.
func TestLoopBeforeItsConstNamesIt(t *testing.T) {
	onEachBackend(t, func(t *testing.T) {
		set := must(op2.NewSet(10, "co_cells"))
		h := must(op2.NewDat(set, 1, make([]float64, 10), "co_h"))
		k := op2.NewKernel(constOrderSource, "co_scale")
		err := op2.ParLoop(k, set, h.Arg(op2.RW))
		wantErr(t, err, `loop "co_scale" over set "co_cells"`, `kernel "co_scale"`, `identifier "co_grav"`, "NewConst before the first loop that compiles this source")
		grav := must(op2.NewConst(1, []float64{9.81}, "co_grav"))
		defer grav.Remove()
		check(t, op2.ParLoop(k, set, h.Arg(op2.RW)))
	})
}
