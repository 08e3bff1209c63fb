package dist

import (
	"testing"
	"unsafe"

	"github.com/goop2/op2/mesh"
)

// BenchmarkPartitionAirfoil partitions OP2's reference Airfoil mesh
// (720 000 cells) with Airfoil's dats by RCB over 2 simulated ranks.
func BenchmarkPartitionAirfoil(b *testing.B) {
	am, err := mesh.Generate(400, 600)
	if err != nil {
		b.Fatal(err)
	}
	m := &Mesh{Sets: []Set{{"nodes", am.NNode}, {"edges", am.NEdge}, {"bedges", am.NBedge}, {"cells", am.NCell}}}
	m.Maps = []Map{{Name: "pedge", From: 1, To: 0, Arity: 2, Table: am.Edge}, {Name: "pecell", From: 1, To: 3, Arity: 2, Table: am.Ecell}, {Name: "pbedge", From: 2, To: 0, Arity: 2, Table: am.Bedge}, {Name: "pbecell", From: 2, To: 3, Arity: 1, Table: am.Becell}, {Name: "pcell", From: 3, To: 0, Arity: 4, Table: am.Cell}}
	xb := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(am.X))), 8*len(am.X))
	dats := []BlockDat{{Name: "x", Set: 0, Elem: 16, Values: xb}, {Name: "bound", Set: 2, Elem: 4, Values: make([]byte, 4*am.NBedge)}}
	for _, n := range []string{"q", "qold", "res"} {
		dats = append(dats, BlockDat{Name: n, Set: 3, Elem: 32, Values: make([]byte, 32*am.NCell)})
	}
	dats = append(dats, BlockDat{Name: "adt", Set: 3, Elem: 8, Values: make([]byte, 8*am.NCell)})
	for b.Loop() {
		// Two ranks, each its half of every set.
		parts := make([]*BlockMesh, 2)
		st := make([][]int, len(m.Sets))
		for s, set := range m.Sets {
			st[s] = []int{0, set.Size / 2, set.Size}
		}
		for r := range parts {
			p := &BlockMesh{}
			for s, set := range m.Sets {
				p.Sets = append(p.Sets, Set{Name: set.Name, Size: st[s][r+1] - st[s][r]})
			}
			for _, mp := range m.Maps {
				p.Maps = append(p.Maps, Map{Name: mp.Name, From: mp.From, To: mp.To, Arity: mp.Arity, Table: mp.Table[st[mp.From][r]*mp.Arity : st[mp.From][r+1]*mp.Arity]})
			}
			for _, dd := range dats {
				p.Dats = append(p.Dats, BlockDat{Name: dd.Name, Set: dd.Set, Elem: dd.Elem, Values: dd.Values[st[dd.Set][r]*dd.Elem : st[dd.Set][r+1]*dd.Elem]})
			}
			parts[r] = p
		}
		_, errs := runRanks(2, func(c Comm) (*Result, error) {
			r := c.Rank()
			return PartitionBlocks(c, parts[r], Partitioning{Kind: "rcb", CoordDim: 2, Coords: am.X[2*st[0][r] : 2*st[0][r+1]]})
		})
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
}
