package checkpoint

import (
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/h5"
)

// needs are the global numbers of a rank's elements, in local order, of
// the kinds a partitioned set has, and scattered ones.
func needs() []struct {
	name   string
	need   []int32
	direct bool
} {
	seq := func(from, n int) []int32 {
		s := make([]int32, n)
		for i := range s {
			s[i] = int32(from + i)
		}
		return s
	}
	// Bands of a grid's rows, then a halo of single elements beside them.
	var bands []int32
	for row := range 40 {
		bands = append(bands, seq(row*300+100, 120)...)
	}
	for row := range 40 {
		bands = append(bands, int32(row*300+99), int32(row*300+220), int32(row*300+222))
	}
	reversed := seq(0, 5000)
	slices.Reverse(reversed)
	shuffled := seq(0, 5000)
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	return []struct {
		name   string
		need   []int32
		direct bool
	}{
		{"none", nil, true},
		{"one", []int32{7}, true},
		{"in order", seq(0, 5000), true},
		{"two blocks swapped", append(seq(2500, 2500), seq(0, 2500)...), true},
		{"bands and halo", bands, true},
		{"a small set's halo", []int32{90, 3, 50, 51, 17, 60, 61, 62, 4}, true},
		{"reversed", reversed, false},
		{"shuffled", shuffled, false},
	}
}

// TestPlanDirect: the reads planned bring each local element its row,
// in few reads; scattered elements are left to the exchange.
func TestPlanDirect(t *testing.T) {
	const elem = 3
	for _, c := range needs() {
		t.Run(c.name, func(t *testing.T) {
			p, ok := planDirect(c.need)
			if ok != c.direct {
				t.Fatalf("direct %v, want %v", ok, c.direct)
			}
			if !ok {
				return
			}
			if max := len(c.need)/directMinRun + directSlack; len(p.runs) > max {
				t.Errorf("%d reads for %d elements, more than %d", len(p.runs), len(c.need), max)
			}
			// The file's row g holds g*elem, g*elem+1, ...
			host := make([]int, len(c.need)*elem)
			scratch := make([]int, p.scratch*elem)
			for _, r := range p.runs {
				to := host
				if r.Into == 1 {
					to = scratch
				}
				for k := range int(r.Count) * elem {
					to[int(r.Offset)*elem+k] = int(r.Start)*elem + k
				}
			}
			for _, cp := range p.copies {
				copy(host[cp.local*elem:(cp.local+cp.n)*elem], scratch[cp.from*elem:(cp.from+cp.n)*elem])
			}
			for i, g := range c.need {
				for k := range elem {
					if got, want := host[i*elem+k], int(g)*elem+k; got != want {
						t.Fatalf("element %d (global %d) value %d: %d, want %d", i, g, k, got, want)
					}
				}
			}
		})
	}
	was := SetDirectReads(false)
	defer SetDirectReads(was)
	if _, ok := planDirect([]int32{0, 1, 2}); ok {
		t.Error("SetDirectReads(false): a set is still read directly")
	}
}

// TestReadDirect reads a dataset's rows through HDF5 as planned, into a
// dat's host copy, for each kind of need; rows beyond the dataset are an
// error naming them, not a crash.
func TestReadDirect(t *testing.T) {
	needHDF5(t)
	const rows, dim = 13000, 3
	vals := make([]float64, rows*dim)
	for i := range vals {
		vals[i] = float64(i) + 0.5
	}
	path := filepath.Join(t.TempDir(), "d.h5")
	f, err := h5.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Write("dats/0", h5.Float64, 2, rows, dim, unsafe.Pointer(&vals[0])); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if f, err = h5.Open(path, false); err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := &restore{f: f}
	var scratch []byte
	for _, c := range needs() {
		p, ok := planDirect(c.need)
		if !ok {
			continue
		}
		host := make([]float64, max(1, len(c.need))*dim)
		set := &core.Set{Name: "cells", Owned: len(c.need), Total: len(c.need)}
		s := &core.Storage{Name: "q", Type: core.Float64, Dim: dim, Set: set, Len: len(c.need) * dim, Host: unsafe.Pointer(&host[0])}
		if scratch, err = r.readDirect("dats/0", s, p, scratch); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i, g := range c.need {
			if got, want := host[i*dim:(i+1)*dim], vals[int(g)*dim:(int(g)+1)*dim]; !slices.Equal(got, want) {
				t.Fatalf("%s: element %d (global %d): %v, want %v", c.name, i, g, got, want)
			}
		}
	}
	p, _ := planDirect([]int32{5, rows, rows + 1})
	host := make([]float64, 3*dim)
	s := &core.Storage{Name: "q", Type: core.Float64, Dim: dim, Set: &core.Set{Owned: 3, Total: 3}, Len: 3 * dim, Host: unsafe.Pointer(&host[0])}
	if _, err := r.readDirect("dats/0", s, p, nil); err == nil || !strings.Contains(err.Error(), "dats/0") {
		t.Errorf("reading rows past the dataset: %v, want an error naming it", err)
	}
	p, _ = planDirect([]int32{0, 1})
	if _, err := r.readDirect("dats/9", s, p, nil); err == nil || !strings.Contains(err.Error(), "dats/9") {
		t.Errorf("reading a dataset the file lacks: %v, want an error naming it", err)
	}
}
