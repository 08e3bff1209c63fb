package airfoil_test

import (
	"fmt"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/mesh"
)

// Run one of Airfoil's loops alone, repeated, as op2bench's compute floor
// does to time it with its data in cache.
func ExampleSolver_RunLoop() {
	m, err := mesh.Generate(6, 9)
	if err != nil {
		panic(err)
	}
	if err := op2.Configure(op2.Config{Backend: "sequential", Timing: true}); err != nil {
		panic(err)
	}
	defer op2.EnableTiming(false)
	s, err := airfoil.New(m)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	op2.ResetTimings()
	if err := s.RunLoop("res_calc", 100); err != nil {
		panic(err)
	}
	for _, lt := range op2.Timings() {
		fmt.Printf("%s over %s: %d calls\n", lt.Kernel, lt.Set, lt.Calls)
	}
	op2.ResetTimings()
	// Output:
	// res_calc over edges: 100 calls
}
