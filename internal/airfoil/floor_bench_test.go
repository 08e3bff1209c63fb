package airfoil

import (
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

// BenchmarkAdtCalcMovement times adt_calc on the built-in 720 000-cell
// mesh, sequential, against a kernel with the same arguments that only
// moves their data ("move": it sums what adt_calc reads into what it
// writes, with two divisions so that the defaults give it lanes too):
// the time adt_calc's access pattern takes on its own, which the STREAM
// rate (op2bench's memory floor) underestimates for a gather of four
// nodes per cell. ns per cell; the scalar code (SIMD off) and the
// defaults.
//
//	go test -run '^$' -bench AdtCalcMovement -count 3 ./internal/airfoil
func BenchmarkAdtCalcMovement(b *testing.B) {
	m, err := mesh.Generate(400, 600)
	if err != nil {
		b.Fatal(err)
	}
	const move = `void adt_calc(const double *x1, const double *x2, const double *x3,
              const double *x4, const double *q, double *adt) {
  *adt = (x1[0] + x2[1] + x3[0] + x4[1] + q[0] + q[1] + q[2] + q[3]) / cfl / gam;
}`
	defer op2.Configure(op2.Config{})
	for _, simd := range []string{"off", "auto"} {
		for _, k := range []struct{ name, src string }{{"adt_calc", adtCalcSrc}, {"move", move}} {
			b.Run(k.name+"/"+simd, func(b *testing.B) {
				benchLoop(b, m, simd, "adt_calc", func(s *Solver) { s.adtCalc = op2.NewKernel(k.src, "adt_calc") })
			})
		}
	}
}
