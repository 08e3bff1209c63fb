package matrix

import "testing"

// TestSortRow: a gathered row's entries end sorted by column with their
// values, for short rows (insertion) and long ones.
func TestSortRow(t *testing.T) {
	for _, n := range []int{0, 1, 5, 32, 33, 200} {
		cols := make([]int32, n)
		vals := make([]float64, n)
		for i := range cols {
			cols[i] = int32((i*37 + 11) % (n + 1000))
			vals[i] = float64(cols[i]) * 0.5
		}
		sortRow(cols, vals)
		for i := range cols {
			if i > 0 && cols[i-1] >= cols[i] || vals[i] != float64(cols[i])*0.5 {
				t.Fatalf("n = %d: entry %d is (%d, %v) after %v", n, i, cols[i], vals[i], cols[:i])
			}
		}
	}
}
