package engine

import (
	"slices"
	"testing"
)

// TestSubsetAlgebra checks the sorted-list operations behind
// op2.Subset's Intersection and Difference, and the rows a subset's
// derived maps hold.
func TestSubsetAlgebra(t *testing.T) {
	cases := []struct {
		a, b, and, minus []int32
	}{
		{nil, nil, nil, nil},
		{[]int32{1, 2, 3}, nil, nil, []int32{1, 2, 3}},
		{nil, []int32{1, 2}, nil, nil},
		{[]int32{0, 2, 4, 6}, []int32{1, 2, 3, 6, 7}, []int32{2, 6}, []int32{0, 4}},
		{[]int32{5}, []int32{5}, []int32{5}, nil},
	}
	for _, c := range cases {
		if got := IntersectSorted(c.a, c.b); !slices.Equal(got, c.and) {
			t.Errorf("IntersectSorted(%v, %v) = %v, want %v", c.a, c.b, got, c.and)
		}
		if got := SubtractSorted(c.a, c.b); !slices.Equal(got, c.minus) {
			t.Errorf("SubtractSorted(%v, %v) = %v, want %v", c.a, c.b, got, c.minus)
		}
	}
	table := []int32{10, 11, 20, 21, 30, 31} // three rows of two
	if got, want := SubsetRows(nil, table, []int32{0, 2}, 2), []int32{10, 11, 30, 31}; !slices.Equal(got, want) {
		t.Errorf("SubsetRows = %v, want %v", got, want)
	}
	buf := make([]int32, 0, 2)
	if got := SubsetRows(buf, table, []int32{1}, 2); &got[0] != &buf[:1][0] || !slices.Equal(got, []int32{20, 21}) {
		t.Errorf("SubsetRows into a buffer with room = %v, not in the buffer's memory", got)
	}
}
