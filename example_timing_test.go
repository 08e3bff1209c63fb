package op2_test

import (
	"fmt"
	"os"

	"github.com/goop2/op2"
)

// The timing report: switch timing on, run loops, then read the figures
// per loop, or print them with WriteTimingTable (or as CSV or JSON).
func ExampleTimings() {
	op2.EnableTiming(true)
	defer op2.EnableTiming(false)
	defer op2.ResetTimings()

	nodes, _ := op2.NewSet(5, "nodes")
	edges, _ := op2.NewSet(4, "edges")
	pedge, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3, 3, 4}, "pedge")
	w, _ := op2.NewDat(edges, 1, []float64{1, 2, 3, 4}, "w")
	sum, _ := op2.NewDat[float64](nodes, 1, nil, "sum")
	k := op2.NewKernel(`void spread(const double *w, double *a, double *b) { *a += *w; *b += *w; }`, "spread")
	for i := 0; i < 10; i++ {
		if err := op2.ParLoop(k, edges, w.Arg(op2.Read), sum.ArgMap(op2.Inc, pedge, 0), sum.ArgMap(op2.Inc, pedge, 1)); err != nil {
			fmt.Println(err)
			return
		}
	}
	for _, t := range op2.Timings() {
		// Per call: w read (4 × 8 bytes), sum read and written on the 5
		// nodes the map reaches (2 × 5 × 8), the map (4 × 2 × 4).
		fmt.Printf("%s over %s: %d calls, %.0f bytes each\n", t.Kernel, t.Set, t.Calls, t.Bytes/float64(t.Calls))
	}
	// Output: spread over edges: 10 calls, 144 bytes each
}

// Printing the timing report at the end of a program: one row per loop
// with its calls, total and mean time, plan and compile time and
// effective bandwidth, then the sums (the times differ from run to run, so
// this example shows no output).
func ExampleWriteTimingTable() {
	op2.EnableTiming(true)
	// ... the program's loops ...
	if err := op2.WriteTimingTable(os.Stdout); err != nil {
		fmt.Println(err)
	}
	// The same figures for other tools:
	// op2.WriteTimingCSV(f) and op2.WriteTimingJSON(f).
}
