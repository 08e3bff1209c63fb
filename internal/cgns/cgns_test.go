package cgns

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/testreq"
)

// TestMissingLibrary: a library file that is not there is ErrUnavailable
// naming what to install, remembered for the next call; the system's
// library, when present, loads.
func TestMissingLibrary(t *testing.T) {
	t.Setenv(LibraryEnv, "/nonexistent/libcgns.so.3.4")
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), Install) {
		t.Fatalf("Load = %v, want ErrUnavailable saying %q", err, Install)
	}
	if again := Load(); again == nil || again.Error() != err.Error() {
		t.Errorf("second Load = %v, want %v", again, err)
	}
}

// TestPartialReads: on the converted box (mesh/cgns's testdata), ranges
// of vertices and of a section's elements read alone, and blocks of a
// section's connectivity array read through cgio, are those ranges of
// the whole arrays; a range the file does not have, a node it lacks and
// an array not of integers are an *Error naming the call.
func TestPartialReads(t *testing.T) {
	testreq.Check(t, "cgns", Load(), ErrUnavailable)
	f, err := Open(filepath.Join("..", "..", "mesh", "cgns", "testdata", "box.cgns"), Read)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	base, _, _, err := f.Base(1)
	if err != nil {
		t.Fatal(err)
	}
	zone, size, err := f.ZoneRead(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	nv := size[0]
	for _, name := range []string{"CoordinateX", "CoordinateZ"} {
		all, err := f.Coord(1, 1, name, nv)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]int64{{1, 1}, {1, nv}, {2, 7}, {nv, nv}} {
			got, err := f.CoordRange(1, 1, name, r[0], r[1])
			if err != nil || !slices.Equal(got, all[r[0]-1:r[1]]) {
				t.Errorf("%s [%d, %d]: %v, %v; want %v", name, r[0], r[1], got, err, all[r[0]-1:r[1]])
			}
		}
	}
	ns, err := f.NSections(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	for s := 1; s <= ns; s++ {
		sec, err := f.SectionRead(1, 1, s)
		if err != nil {
			t.Fatal(err)
		}
		npe, err := NodesPerElement(sec.Type)
		if err != nil || npe == 0 {
			t.Fatalf("section %s: type %d, %d nodes per element: %v", sec.Name, sec.Type, npe, err)
		}
		n := sec.End - sec.Start + 1
		all, err := f.Elements(1, 1, s, n*int64(npe))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range [][2]int64{{sec.Start, sec.Start}, {sec.Start, sec.End}, {sec.Start + n/3, sec.End - n/3}, {sec.End, sec.End}} {
			got, err := f.ElementsPartial(1, 1, s, r[0], r[1], (r[1]-r[0]+1)*int64(npe))
			want := all[(r[0]-sec.Start)*int64(npe) : (r[1]-sec.Start+1)*int64(npe)]
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("%s [%d, %d]: %v; want %d values", sec.Name, r[0], r[1], err, len(want))
			}
		}
		if _, err := f.ElementsPartial(1, 1, s, sec.Start, sec.End+1, (n+1)*int64(npe)); err == nil {
			t.Errorf("%s: a range past the section's end: no error", sec.Name)
		}
		a, err := f.IntArray("/" + base + "/" + zone + "/" + sec.Name + "/ElementConnectivity")
		if err != nil || a.Len != int64(len(all)) {
			t.Fatalf("%s: IntArray: %v (%v values, want %d)", sec.Name, err, a, len(all))
		}
		for lo := int64(1); lo <= a.Len; lo += 7 {
			hi := min(a.Len, lo+6)
			got, err := a.ReadBlock(lo, hi)
			if err != nil || !slices.Equal(got, all[lo-1:hi]) {
				t.Fatalf("%s: values [%d, %d]: %v, %v; want %v", sec.Name, lo, hi, got, err, all[lo-1:hi])
			}
		}
		if _, err := a.ReadBlock(a.Len, a.Len+1); !errors.As(err, new(*Error)) {
			t.Errorf("%s: values past the end: %v", sec.Name, err)
		}
	}
	var e *Error
	for _, tc := range []struct {
		call string
		err  error
	}{
		{"cg_coord_read", func() error { _, err := f.CoordRange(1, 1, "CoordinateX", 0, 2); return err }()},
		{"cg_coord_read", func() error { _, err := f.CoordRange(1, 1, "CoordinateX", 3, 2); return err }()},
		{"cg_coord_read", func() error { _, err := f.CoordRange(1, 1, "CoordinateX", 1, nv+1); return err }()},
		{"cg_coord_read", func() error { _, err := f.CoordRange(1, 1, "CoordinateW", 1, 2); return err }()},
		{"cg_elements_partial_read", func() error { _, err := f.ElementsPartial(1, 1, 1, 0, 1, 4); return err }()},
		{"cgio_get_node_id", func() error {
			_, err := f.IntArray("/" + base + "/" + zone + "/Nothing/ElementConnectivity")
			return err
		}()},
		{"cgio_get_data_type", func() error {
			_, err := f.IntArray("/" + base + "/" + zone + "/GridCoordinates/CoordinateX")
			return err
		}()},
	} {
		if !errors.As(tc.err, &e) || e.Call != tc.call {
			t.Errorf("%v: want an *Error of %s", tc.err, tc.call)
		}
	}
}
