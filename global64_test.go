package op2_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// TestNewMap64 declares maps from 64-bit values in one process: values
// that index the target set make the map NewMap makes; others are refused
// by name, entry and value, as NewMap refuses them.
func TestNewMap64(t *testing.T) {
	nodes := must(op2.NewSet(4, "nodes"))
	edges := must(op2.NewSet(2, "edges"))
	for _, tc := range []struct {
		name   string
		from   *op2.Set
		values []int64
		want   string // error text, "" for none
	}{
		{"fits", edges, []int64{0, 1, 3, 2}, ""},
		{"negative", edges, []int64{0, -1, 3, 2}, `map "negative" from "edges" to "nodes": entry 1 (element 0, column 1) is -1, outside the target set [0,4)`},
		{"beyond the set", edges, []int64{0, 1, 4, 2}, `entry 2 (element 1, column 0) is 4, outside the target set [0,4)`},
		{"beyond int32", edges, []int64{0, 1, 1 << 31, 2}, `entry 2 (element 1, column 0) is 2147483648, outside the target set [0,4)`},
		{"beyond 2^62", edges, []int64{1 << 62, 1, 0, 2}, `is 4611686018427387904, outside`},
		{"short", edges, []int64{0, 1, 2}, `3 values given, want 4`},
		{"nil source", nil, []int64{0}, `source and target sets must not be nil`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := op2.NewMap64(tc.from, nodes, 2, tc.values, tc.name)
			if tc.want != "" {
				if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "op2: ") {
					t.Fatalf("error %v, want one containing %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := m.Values(); !slices.Equal(got, []int32{0, 1, 3, 2}) {
				t.Errorf("Values() = %v", got)
			}
			if got := must(m.Gather64()); !slices.Equal(got, tc.values) {
				t.Errorf("Gather64() = %v, want %v", got, tc.values)
			}
			if got := must(m.Gather()); !slices.Equal(got, []int32{0, 1, 3, 2}) {
				t.Errorf("Gather() = %v", got)
			}
			start, blk := must2(m.GatherBlock64())
			if start != 0 || !slices.Equal(blk, tc.values) {
				t.Errorf("GatherBlock64() = %d, %v", start, blk)
			}
		})
	}
	if got := edges.DeclaredNumbers64(); !slices.Equal(got, []int64{0, 1}) {
		t.Errorf("DeclaredNumbers64() = %v", got)
	}
}

func must2[A, B any](a A, b B, err error) (A, B) {
	if err != nil {
		panic(err)
	}
	return a, b
}
