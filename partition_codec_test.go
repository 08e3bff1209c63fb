package op2

import (
	"reflect"
	"testing"

	"github.com/goop2/op2/internal/dist"
)

// TestPartitionMessagesRoundTrip: declarations and layouts decode to what
// was encoded, and a truncated message is an error, not a panic.
func TestPartitionMessagesRoundTrip(t *testing.T) {
	d := &declaration{Shape: "set \"a\"\n", Kind: "rcb", Coords: 1, Metis: -1, Sizes: []int{3, 0},
		Maps: [][]int32{{0, 1, 2}, nil}, Dats: [][]byte{{1, 2, 3}, {}}}
	l := &layout{Err: "", GlobalSizes: []int{6, 7}, Cut: 12, Metis: 3, EdgeCuts: []int{4, 0, 9},
		Local: dist.Local{Sets: []dist.LocalSet{{Core: 1, Owned: 2, Exec: 3, Total: 4, Global: []int32{5, 6, 7, 8},
			Neighbours: []dist.Neighbour{{Rank: 1, Send: []int32{0, 1}, RecvExec: [2]int32{2, 3}, RecvNonexec: [2]int32{3, 4}}}}},
			Maps: [][]int32{{0, 3, 1, 2}}},
		Dats: [][]byte{{9, 9}}}
	gotD, err := decodeDeclaration(encodeDeclaration(d))
	if err != nil {
		t.Fatal(err)
	}
	// Empty slices come back as nil or empty: compare by content.
	if gotD.Shape != d.Shape || gotD.Kind != d.Kind || gotD.Coords != 1 || gotD.Metis != -1 || !reflect.DeepEqual(gotD.Sizes, d.Sizes) ||
		!reflect.DeepEqual(gotD.Maps[0], d.Maps[0]) || len(gotD.Maps[1]) != 0 || !reflect.DeepEqual(gotD.Dats[0], d.Dats[0]) || len(gotD.Dats[1]) != 0 {
		t.Errorf("declaration: got %+v, want %+v", gotD, d)
	}
	gotL, err := decodeLayout(encodeLayout(l))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(gotL, l) {
		t.Errorf("layout: got %+v, want %+v", gotL, l)
	}
	enc := encodeLayout(l)
	for _, n := range []int{0, 7, len(enc) / 2, len(enc) - 1} {
		if _, err := decodeLayout(enc[:n]); err == nil {
			t.Errorf("a layout truncated to %d of %d bytes decoded", n, len(enc))
		}
	}
}
