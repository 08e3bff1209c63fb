package airfoil

import (
	"fmt"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/mesh"
)

// BenchmarkKernelsCXX times Airfoil's res_calc and adt_calc on the
// built-in 720 000-cell mesh, sequential, with their kernels declared C
// and declared C++ (compiled by the C++ compiler, as a user's C++
// kernel is), with the scalar code (SIMD off) and the defaults (lanes):
// ns per call, the cases interleaved by -count.
//
//	go test -run '^$' -bench KernelsCXX -count 3 ./internal/airfoil
func BenchmarkKernelsCXX(b *testing.B) {
	m, err := mesh.Generate(400, 600)
	if err != nil {
		b.Fatal(err)
	}
	defer op2.Configure(op2.Config{})
	for _, loop := range []string{"res_calc", "adt_calc"} {
		for _, cxx := range []bool{false, true} {
			for _, simd := range []string{"off", "auto"} {
				lang := "C"
				if cxx {
					lang = "C++"
				}
				b.Run(fmt.Sprintf("%s/%s/%s", loop, lang, simd), func(b *testing.B) {
					benchLoop(b, m, simd, loop, func(s *Solver) {
						if cxx {
							s.resCalc, s.adtCalc = s.resCalc.CXX(), s.adtCalc.CXX()
						}
					})
				})
			}
		}
	}
}

// benchLoop times b.N calls of loop name of a Solver on mesh m,
// sequential with SIMD setting simd, after set has changed its kernels
// and two untimed calls; it reports ns per cell too.
func benchLoop(b *testing.B, m *mesh.Mesh, simd, name string, set func(s *Solver)) {
	if err := op2.Configure(op2.Config{Backend: "sequential", SIMD: simd}); err != nil {
		b.Fatal(err)
	}
	s, err := New(m)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	set(s)
	if err := s.RunLoop(name, 2); err != nil { // compiles, warms
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := s.RunLoop(name, b.N); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(m.NCell), "ns/cell")
}
