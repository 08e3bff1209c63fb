package hdf5_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
)

// Write a small mesh in OP2's HDF5 layout and declare it again from the
// file, as OP2's op_decl_set_hdf5, op_decl_map_hdf5, op_decl_dat_hdf5 and
// op_get_const_hdf5 do.
func Example() {
	dir, _ := os.MkdirTemp("", "hdf5-example-")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "grid.h5")

	nodes, _ := op2.NewSet(4, "ex_nodes")
	edges, _ := op2.NewSet(3, "ex_edges")
	pedge, _ := op2.NewMap(edges, nodes, 2, []int32{0, 1, 1, 2, 2, 3}, "ex_pedge")
	x, _ := op2.NewDat(nodes, 1, []float64{0, 1, 3, 6}, "ex_x")

	f, err := hdf5.Create(path)
	if err != nil {
		fmt.Println(err) // e.g. libhdf5 missing: the message says what to install
		return
	}
	f.WriteSet(nodes)
	f.WriteSet(edges)
	f.WriteMap(pedge)
	hdf5.WriteDat(f, x)
	hdf5.WriteConst(f, "ex_scale", []float64{0.5})
	if err := f.Close(); err != nil {
		fmt.Println(err)
		return
	}

	f, err = hdf5.Open(path)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	nodes2, _ := f.DeclareSet("ex_nodes")
	edges2, _ := f.DeclareSet("ex_edges")
	pedge2, _ := f.DeclareMap(edges2, nodes2, 2, "ex_pedge")
	x2, _ := hdf5.DeclareDat[float64](f, nodes2, 1, "ex_x")
	scale, _ := hdf5.ReadConst[float64](f, "ex_scale", 1)
	info, _ := f.Info("ex_x")
	fmt.Println(nodes2.Size(), edges2.Size(), pedge2.Values(), x2.DataRO(), scale)
	fmt.Printf("%+v\n", info)
	// Output:
	// 4 3 [0 1 1 2 2 3] [0 1 3 6] [0.5]
	// {Rows:4 Dim:1 Type:double}
}
