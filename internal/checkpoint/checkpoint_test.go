package checkpoint

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/h5"
	"github.com/goop2/op2/internal/testreq"
)

// needHDF5 skips the test without the HDF5 library.
func needHDF5(t *testing.T) {
	t.Helper()
	testreq.Check(t, "hdf5", h5.Load(), h5.ErrNoHDF5)
}

// program is a program of one process: a dat of dim 2 on a set of 3
// elements, an int Global and a double constant.
func program(q []float64, g []int32, c []float64) (Program, *core.Const) {
	set := &core.Set{Name: "cells", Owned: 3, Total: 3}
	dat := &core.Storage{Name: "q", Type: core.Float64, Dim: 2, Set: set, Len: len(q), Host: unsafe.Pointer(&q[0])}
	glob := &core.Storage{Name: "g", Type: core.Int32, Dim: 1, Len: 1, Host: unsafe.Pointer(&g[0])}
	k := &core.Const{Name: "gam", Type: core.Float64, Dim: 1, Host: unsafe.Pointer(&c[0])}
	return Program{Dats: []*core.Storage{dat}, Globals: []*core.Storage{glob}, Consts: []*core.Const{k}}, k
}

func TestWriteRestore(t *testing.T) {
	needHDF5(t)
	q, g, c := []float64{1, 2, 3, 4, 5, 6}, []int32{7}, []float64{0.5}
	p, k := program(q, g, c)
	path := filepath.Join(t.TempDir(), "c.h5")
	if err := Write(p, path, map[string][]byte{"step": []byte("12"), "": nil}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
	st, err := State(path)
	if err != nil || string(st["step"]) != "12" || len(st) != 2 {
		t.Fatalf("State = %q, %v; want step 12 and an empty key", st, err)
	}
	clear(q)
	g[0], c[0] = 0, 0
	v := k.Version.Load()
	st, err = Restore(p, path)
	if err != nil || string(st["step"]) != "12" {
		t.Fatalf("Restore = %q, %v", st, err)
	}
	if !slices.Equal(q, []float64{1, 2, 3, 4, 5, 6}) || g[0] != 7 || c[0] != 0.5 {
		t.Errorf("restored %v, %v, %v", q, g, c)
	}
	if k.Version.Load() == v {
		t.Error("the restored constant's version did not change")
	}
}

func TestRestoreRefusesAnotherProgram(t *testing.T) {
	needHDF5(t)
	q, g, c := []float64{1, 2, 3, 4, 5, 6}, []int32{7}, []float64{0.5}
	p, _ := program(q, g, c)
	path := filepath.Join(t.TempDir(), "c.h5")
	if err := Write(p, path, nil); err != nil {
		t.Fatal(err)
	}
	other := []float64{9, 9, 9, 9, 9, 9}
	p2, _ := program(other, []int32{1}, []float64{2})
	p2.Dats[0].Name = "r"
	_, err := Restore(p2, path)
	if err == nil || !strings.Contains(err.Error(), `holds no dat "r" on set "cells" of dim 2 and type double`) {
		t.Fatalf("Restore of another dat: %v", err)
	}
	if other[0] != 9 {
		t.Error("a refused restore changed the program's values")
	}
	if _, err := Restore(p, filepath.Join(t.TempDir(), "none.h5")); err == nil {
		t.Error("Restore of a missing file succeeded")
	}
}

// TestDeferredDats writes a checkpoint whose dat is decided after Begin:
// resolved without its values, Restore leaves it as the program has it.
func TestDeferredDats(t *testing.T) {
	needHDF5(t)
	q, g, c := []float64{1, 2, 3, 4, 5, 6}, []int32{7}, []float64{0.5}
	p, _ := program(q, g, c)
	path := filepath.Join(t.TempDir(), "c.h5")
	cs, err := Begin(p, path, nil, func(*core.Storage) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	if got := cs.Order(); len(got) != 1 || got[0] != p.Dats[0] {
		t.Fatalf("Order = %v, want the dat", got)
	}
	if err := cs.Resolve(p.Dats[0], false); err != nil {
		t.Fatal(err)
	}
	if err := cs.Finish(nil); err != nil {
		t.Fatal(err)
	}
	q[0] = 42
	if _, err := Restore(p, path); err != nil {
		t.Fatal(err)
	}
	if q[0] != 42 {
		t.Errorf("a dat written without values was restored: %v", q)
	}
}
