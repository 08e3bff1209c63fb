package op2_test

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/regfile/regfiletest"
)

// The golden texts below are what OP2's op_print_dat_to_txtfile writes
// (checked against C printf with the same formats).
func TestDatTextGolden(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name string
		dump func(path string) error
		want string
	}{
		{"float64", func(p string) error {
			s := must(op2.NewSet(3, "s"))
			return must(op2.NewDat(s, 2, []float64{1, -0.25, math.Copysign(0, -1), 1e-300, 123456.789, 1.0 / 3}, "d")).WriteText(p)
		}, "3 2\n +1.000000000000000E+00 -2.500000000000000E-01\n +0.000000000000000E+00 +1.000000000000000E-300\n +1.234567890000000E+05 +3.333333333333333E-01\n"},
		{"float32", func(p string) error {
			s := must(op2.NewSet(2, "s"))
			return must(op2.NewDat(s, 2, []float32{1.5, -2.25, 0.1, 1e-7}, "d")).WriteText(p)
		}, "2 2\n +1.500000 -2.250000\n +0.100000 +0.000000\n"},
		{"int32", func(p string) error {
			s := must(op2.NewSet(3, "s"))
			return must(op2.NewDat(s, 1, []int32{0, -7, math.MaxInt32}, "d")).WriteText(p)
		}, "3 1\n +0\n -7\n +2147483647\n"},
		{"int64", func(p string) error {
			s := must(op2.NewSet(1, "s"))
			return must(op2.NewDat(s, 3, []int64{-9000000000, 5, 0}, "d")).WriteText(p)
		}, "1 3\n -9000000000 +5 +0\n"},
		{"uint32", func(p string) error {
			s := must(op2.NewSet(2, "s"))
			return must(op2.NewDat(s, 1, []uint32{0, math.MaxUint32}, "d")).WriteText(p)
		}, "2 1\n +0\n +4294967295\n"},
		{"special", func(p string) error {
			s := must(op2.NewSet(1, "s"))
			return must(op2.NewDat(s, 2, []float64{math.NaN(), math.Inf(-1)}, "d")).WriteText(p)
		}, "1 2\n +NAN -INF\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".txt")
			check(t, c.dump(p))
			got := string(must(os.ReadFile(p)))
			if got != c.want {
				t.Errorf("got\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}

// roundTrip writes a dat after a loop has changed it (on a device backend
// the values are then only on the device), reads both dumps into fresh
// dats and compares, and checks that a loop sees the loaded values.
func roundTrip[T op2.Scalar](t *testing.T, ctype string, values []T, dim int) {
	t.Helper()
	dir := t.TempDir()
	n := len(values) / dim
	set := must(op2.NewSet(n, "s"))
	d := must(op2.NewDat(set, dim, values, "d"))
	// A loop that writes every value: d = d (a copy through a second dat).
	tmp := must(op2.NewDat[T](set, dim, nil, "tmp"))
	cp := op2.NewKernel(fmt.Sprintf("void cp(const %[1]s *a, %[1]s *b) { for (int i = 0; i < %[2]d; i++) b[i] = a[i]; }", ctype, dim), "cp")
	check(t, op2.ParLoop(cp, set, d.Arg(op2.Read), tmp.Arg(op2.Write)))
	check(t, op2.ParLoop(cp, set, tmp.Arg(op2.Read), d.Arg(op2.Write)))
	txt, bin := filepath.Join(dir, "d.txt"), filepath.Join(dir, "d.bin")
	check(t, d.WriteText(txt))
	check(t, d.WriteBinary(bin))
	for _, f := range []struct {
		path string
		read func(*op2.Dat[T], string) error
	}{{txt, (*op2.Dat[T]).ReadText}, {bin, (*op2.Dat[T]).ReadBinary}} {
		back := must(op2.NewDat[T](set, dim, nil, "back"))
		check(t, f.read(back, f.path))
		if got := back.DataRO(); !slices.Equal(got, values) {
			t.Errorf("%s: read back %v, want %v", filepath.Base(f.path), got, values)
		}
		// The loaded values reach a loop (uploaded on a device backend).
		out := must(op2.NewDat[T](set, dim, nil, "out"))
		check(t, op2.ParLoop(cp, set, back.Arg(op2.Read), out.Arg(op2.Write)))
		if got := out.DataRO(); !slices.Equal(got, values) {
			t.Errorf("%s: a loop over the loaded dat saw %v, want %v", filepath.Base(f.path), got, values)
		}
	}
}

func TestDatDumpRoundTrip(t *testing.T) {
	for _, backend := range allBackends {
		t.Run(backend, func(t *testing.T) {
			check(t, op2.Use(backend))
			defer op2.Use("sequential")
			// Values the text format holds exactly: 16 significant digits
			// for doubles, 6 decimals for floats.
			t.Run("float64", func(t *testing.T) {
				roundTrip(t, "double", []float64{1, -0.25, 1.0 / 3, 0.1, 6.02214076e23, -1e-300, 0, 2.5e-8, 42}, 3)
			})
			t.Run("float32", func(t *testing.T) {
				roundTrip(t, "float", []float32{1, -0.25, 0.5, 1234.125, -7, 0}, 2)
			})
			t.Run("int32", func(t *testing.T) {
				roundTrip(t, "int", []int32{math.MinInt32, -1, 0, 1, math.MaxInt32, 12}, 1)
			})
			t.Run("int64", func(t *testing.T) {
				roundTrip(t, "long long", []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 9000000000}, 2)
			})
			t.Run("uint32", func(t *testing.T) {
				roundTrip(t, "unsigned int", []uint32{0, 1, math.MaxUint32, 7}, 4)
			})
		})
	}
}

// The binary dump is bit-exact for any double, and matches OP2's layout.
func TestDatBinaryExact(t *testing.T) {
	set := must(op2.NewSet(2, "s"))
	vals := []float64{math.Pi, math.Nextafter(1, 2), math.Copysign(0, -1), math.SmallestNonzeroFloat64}
	d := must(op2.NewDat(set, 2, vals, "d"))
	p := filepath.Join(t.TempDir(), "d.bin")
	check(t, d.WriteBinary(p))
	b := must(os.ReadFile(p))
	if len(b) != 8+32 || b[0] != 2 || b[4] != 2 {
		t.Fatalf("binary dump: %d bytes, header % x", len(b), b[:8])
	}
	back := must(op2.NewDat[float64](set, 2, nil, "back"))
	check(t, back.ReadBinary(p))
	for i, v := range back.DataRO() {
		if math.Float64bits(v) != math.Float64bits(vals[i]) {
			t.Errorf("value %d: %v, want %v", i, v, vals[i])
		}
	}
}

// C's printf writes nan and inf in its own spelling; ReadText takes it,
// and the old OP2 format (values followed by a space) too.
func TestDatReadTextOP2Spellings(t *testing.T) {
	set := must(op2.NewSet(2, "s"))
	p := filepath.Join(t.TempDir(), "d.txt")
	check(t, os.WriteFile(p, []byte("2 2\n+nan -INF \n1.500000 -0.250000 \n\n"), 0o600))
	d := must(op2.NewDat[float32](set, 2, nil, "d"))
	check(t, d.ReadText(p))
	v := d.DataRO()
	if !math.IsNaN(float64(v[0])) || !math.IsInf(float64(v[1]), -1) || v[2] != 1.5 || v[3] != -0.25 {
		t.Errorf("read %v", v)
	}
}

func TestDatReadMalformed(t *testing.T) {
	set := must(op2.NewSet(2, "s"))
	dir := t.TempDir()
	cases := []struct {
		name, text string
		want       string // in the error, after the path
	}{
		{"empty", "", "line 1: the file is empty"},
		{"header-fields", "2\n", "line 1: 1 fields"},
		{"header-number", "two 2\n", "line 1: header"},
		{"wrong-size", "3 2\n1 2\n3 4\n5 6\n", "line 1: header says size 3, dim 2; the dat has size 2, dim 2"},
		{"wrong-dim", "2 3\n1 2 3\n4 5 6\n", "line 1: header says size 2, dim 3"},
		{"short-line", "2 2\n +1 +2\n +3\n", "line 3 (element 1): 1 values, want dim = 2"},
		{"bad-value", "2 2\n +1 +2\n +3 x4\n", `line 3 (element 1, component 1): "x4" is not a int32 value`},
		{"out-of-range", "2 2\n +1 +2\n +3 +4294967296\n", `line 3 (element 1, component 1): "+4294967296"`},
		{"truncated", "2 2\n +1 +2\n", "line 3: end of file after 1 of 2 elements"},
		{"extra", "2 2\n +1 +2\n +3 +4\n +5 +6\n", "line 4: more lines than the 2 elements"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".txt")
			check(t, os.WriteFile(p, []byte(c.text), 0o600))
			d := must(op2.NewDat(set, 2, []int32{9, 9, 9, 9}, "d"))
			err := d.ReadText(p)
			if err == nil || !strings.Contains(err.Error(), p+": "+c.want) || !strings.HasPrefix(err.Error(), "op2: ") {
				t.Fatalf("ReadText: %v\nwant an error naming %s and %q", err, p, c.want)
			}
			if got := d.DataRO(); !slices.Equal(got, []int32{9, 9, 9, 9}) {
				t.Errorf("a refused file changed the dat: %v", got)
			}
		})
	}
	bins := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", []byte{2, 0, 0}, "3 bytes: too short for the header"},
		{"header", []byte{2, 0, 0, 0, 3, 0, 0, 0}, "header says size 2, dim 3"},
		{"length", append([]byte{2, 0, 0, 0, 2, 0, 0, 0}, make([]byte, 12)...), "20 bytes, want 24"},
	}
	for _, c := range bins {
		t.Run("binary-"+c.name, func(t *testing.T) {
			p := filepath.Join(dir, c.name+".bin")
			check(t, os.WriteFile(p, c.b, 0o600))
			d := must(op2.NewDat[int32](set, 2, nil, "d"))
			if err := d.ReadBinary(p); err == nil || !strings.Contains(err.Error(), p+": "+c.want) {
				t.Fatalf("ReadBinary: %v\nwant an error naming %s and %q", err, p, c.want)
			}
		})
	}
	big := filepath.Join(dir, "big.bin")
	check(t, os.WriteFile(big, append([]byte{2, 0, 0, 0, 2, 0, 0, 0}, make([]byte, 100)...), 0o600))
	if err := must(op2.NewDat[int32](set, 2, nil, "d")).ReadBinary(big); err == nil || !strings.Contains(err.Error(), big+": 108 bytes, more than the 24 expected") {
		t.Errorf("ReadBinary of a file too large: %v", err)
	}
	d := must(op2.NewDat[int32](set, 2, nil, "d"))
	if err := d.ReadText(filepath.Join(dir, "missing.txt")); err == nil || !strings.Contains(err.Error(), "missing.txt") {
		t.Errorf("missing file: %v", err)
	}
	if err := d.WriteText(filepath.Join(dir, "no", "such", "dir.txt")); err == nil || !strings.Contains(err.Error(), "dir.txt") {
		t.Errorf("unwritable path: %v", err)
	}
}

// TestDatReadRefusesSpecialFiles: a FIFO, a link to /dev/zero or a
// directory given to ReadText or ReadBinary is refused at once, naming the
// path and what it is, and the dat is unchanged (a FIFO used to block for
// ever, a link to /dev/zero to read until memory ran out).
func TestDatReadRefusesSpecialFiles(t *testing.T) {
	set := must(op2.NewSet(2, "s"))
	d := must(op2.NewDat(set, 1, []float64{7, 8}, "d"))
	for _, s := range regfiletest.Make(t, "dump") {
		for _, read := range []struct {
			name string
			f    func(string) error
		}{{"ReadText", d.ReadText}, {"ReadBinary", d.ReadBinary}} {
			t.Run(s.Name+"/"+read.name, func(t *testing.T) {
				regfiletest.Refused(t, s, func() error { return read.f(s.Path) })
			})
		}
	}
	if got := d.DataRO(); !slices.Equal(got, []float64{7, 8}) {
		t.Errorf("a refused file changed the dat: %v", got)
	}
}
