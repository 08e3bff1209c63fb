package mgcfd_test

import (
	"fmt"
	"os"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/mgcfd"
)

// Run three multigrid cycles on a 3-level box mesh of 9×9×9 nodes.
func ExampleSolver_Run() {
	m, err := mgcfd.Generate(9, 3)
	if err != nil {
		panic(err)
	}
	if err := op2.Configure(op2.Config{Backend: "sequential"}); err != nil {
		panic(err)
	}
	s, err := mgcfd.New(m)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	rms, _, err := s.Run(3, os.Stdout)
	if err != nil {
		panic(err)
	}
	fmt.Printf("rms of the last cycle %.6e\n", rms[len(rms)-1])
	// Output:
	// Performing MG cycle 1 / 3
	// Performing MG cycle 2 / 3
	// Performing MG cycle 3 / 3
	// rms of the last cycle 3.168159e-07
}
