package plan

import "testing"

// BenchmarkBuildAirfoilEdges plans the Airfoil-sized edge loop (1,438,600
// edges, adaptive block size) from scratch on every iteration.
func BenchmarkBuildAirfoilEdges(b *testing.B) {
	en, ec, nn, nc := airfoilEdges()
	in := airfoilInput(en, ec, nn, nc)
	if len(en)/2 != 1438600 {
		b.Fatalf("mesh has %d edges, want 1438600", len(en)/2)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		if i == 0 {
			b.ReportMetric(float64(p.NColors), "colours")
			b.ReportMetric(float64(p.BlockSize), "blocksize")
		}
	}
}

// BenchmarkCheckAirfoilEdges measures the cost of verifying that plan.
func BenchmarkCheckAirfoilEdges(b *testing.B) {
	en, ec, nn, nc := airfoilEdges()
	in := airfoilInput(en, ec, nn, nc)
	p, err := Build(in)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Check(in); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuildAirfoilHost plans the Airfoil-sized edge loop as the openmp
// backend does on two threads (8192-element blocks), in the block
// colouring and in the owner-compute layout.
func BenchmarkBuildAirfoilHost(b *testing.B) {
	en, ec, nn, nc := airfoilEdges()
	for _, owners := range []int{0, 2} {
		b.Run(map[int]string{0: "colour", 2: "owner2"}[owners], func(b *testing.B) {
			in := airfoilInput(en, ec, nn, nc)
			in.BlockSize, in.Owners = 8192, owners
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p, err := Build(in)
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					b.ReportMetric(float64(p.NColors), "colours")
					b.ReportMetric(float64(p.NBlocks), "blocks")
				}
			}
		})
	}
}
