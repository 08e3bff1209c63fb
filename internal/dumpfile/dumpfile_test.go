package dumpfile

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/regfile"
)

// The golden texts are what OP2's op_print_dat_to_txtfile writes (checked
// against C printf with the same formats).
func TestFormatText(t *testing.T) {
	cases := []struct {
		name string
		got  []byte
		want string
	}{
		{"float64", FormatText([]float64{1, -0.25, math.Copysign(0, -1), 1e-300, 123456.789, 1.0 / 3}, core.Float64, 2),
			"3 2\n +1.000000000000000E+00 -2.500000000000000E-01\n +0.000000000000000E+00 +1.000000000000000E-300\n +1.234567890000000E+05 +3.333333333333333E-01\n"},
		{"float64-special", FormatText([]float64{math.NaN(), math.Inf(-1), math.Inf(1), math.Copysign(math.NaN(), -1)}, core.Float64, 2),
			"2 2\n +NAN -INF\n +INF -NAN\n"},
		{"float32", FormatText([]float32{1.5, -2.25, 0.1, 1e-7}, core.Float32, 2), "2 2\n +1.500000 -2.250000\n +0.100000 +0.000000\n"},
		{"float32-special", FormatText([]float32{float32(math.Inf(1)), float32(math.NaN()), float32(math.Copysign(0, -1))}, core.Float32, 3),
			"1 3\n +inf +nan -0.000000\n"},
		{"int32", FormatText([]int32{0, -7, math.MaxInt32}, core.Int32, 1), "3 1\n +0\n -7\n +2147483647\n"},
		{"int64", FormatText([]int64{-9000000000, 5, 0}, core.Int64, 3), "1 3\n -9000000000 +5 +0\n"},
		{"uint32", FormatText([]uint32{0, math.MaxUint32}, core.Uint32, 1), "2 1\n +0\n +4294967295\n"},
		{"empty", FormatText([]float64{}, core.Float64, 2), "0 2\n"},
		{"dim0", FormatText([]int32{}, core.Int32, 0), "0 0\n"},
	}
	for _, c := range cases {
		if string(c.got) != c.want {
			t.Errorf("%s: got\n%q\nwant\n%q", c.name, c.got, c.want)
		}
	}
}

// roundTrip formats v both ways and parses it back.
func roundTrip[T Scalar](t *testing.T, typ core.ScalarType, v []T, dim int) {
	t.Helper()
	n := len(v) / dim
	got, err := ParseText[T](FormatText(v, typ, dim), typ, n, dim)
	if err != nil || !slices.Equal(got, v) {
		t.Errorf("%s text: %v, %v; want %v", typ, got, err, v)
	}
	b := FormatBinary(v, typ, dim)
	if len(b) != HeaderSize+len(v)*typ.Size() || int(b[0]) != n%256 || int(b[4]) != dim {
		t.Errorf("%s binary: %d bytes, header % x", typ, len(b), b[:HeaderSize])
	}
	got, err = ParseBinary[T](b, typ, n, dim)
	if err != nil || !slices.Equal(got, v) {
		t.Errorf("%s binary: %v, %v; want %v", typ, got, err, v)
	}
}

func TestRoundTrip(t *testing.T) {
	// Values the text format holds exactly: 16 significant digits for
	// doubles, 6 decimals for floats.
	roundTrip(t, core.Float64, []float64{1, -0.25, 1.0 / 3, 0.1, 6.02214076e23, -1e-300, 0, 2.5e-8, 42,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}, 3)
	roundTrip(t, core.Float32, []float32{1, -0.25, 0.5, 1234.125, -7, 0}, 2)
	roundTrip(t, core.Int32, []int32{math.MinInt32, -1, 0, 1, math.MaxInt32, 12}, 1)
	roundTrip(t, core.Int64, []int64{math.MinInt64, -1, 0, 1, math.MaxInt64, 9000000000}, 2)
	roundTrip(t, core.Uint32, []uint32{0, 1, math.MaxUint32, 7}, 4)
	// A named type with a scalar underlying type.
	type real float64
	roundTrip(t, core.Float64, []real{1, 2}, 1)
}

// The binary dump is bit-exact for any double.
func TestBinaryExact(t *testing.T) {
	v := []float64{math.Pi, math.Nextafter(1, 2), math.Copysign(0, -1), math.SmallestNonzeroFloat64}
	got, err := ParseBinary[float64](FormatBinary(v, core.Float64, 2), core.Float64, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if math.Float64bits(got[i]) != math.Float64bits(v[i]) {
			t.Errorf("value %d: %v, want %v", i, got[i], v[i])
		}
	}
}

func TestParseValue(t *testing.T) {
	cases := []struct {
		s    string
		typ  core.ScalarType
		want float64 // NaN for NaN
		ok   bool
	}{
		{"+1.500000000000000E+00", core.Float64, 1.5, true},
		{"-2.5", core.Float64, -2.5, true},
		{"+nan", core.Float64, math.NaN(), true},
		{"-NAN", core.Float32, math.NaN(), true},
		{"-INF", core.Float64, math.Inf(-1), true},
		{"+inf", core.Float32, math.Inf(1), true},
		{"+1.797693134862316E+308", core.Float64, math.MaxFloat64, true},
		{"-1.797693134862316E+308", core.Float64, -math.MaxFloat64, true},
		{"+1.797693134862317E+308", core.Float64, 0, false},
		{"1e39", core.Float32, 0, false},
		{"x", core.Float64, 0, false},
		{"+4294967295", core.Uint32, math.MaxUint32, true},
		{"4294967296", core.Uint32, 0, false},
		{"-1", core.Uint32, 0, false},
		{"+2147483647", core.Int32, math.MaxInt32, true},
		{"2147483648", core.Int32, 0, false},
		{"-9000000000", core.Int64, -9000000000, true},
		{"1.5", core.Int64, 0, false},
	}
	for _, c := range cases {
		got, err := parseValue[float64](c.s, c.typ)
		switch {
		case (err == nil) != c.ok:
			t.Errorf("parseValue(%q, %s): %v, %v; want ok %v", c.s, c.typ, got, err, c.ok)
		case !c.ok:
		case math.IsNaN(c.want) && !math.IsNaN(got), !math.IsNaN(c.want) && got != c.want:
			t.Errorf("parseValue(%q, %s) = %v, want %v", c.s, c.typ, got, c.want)
		}
	}
}

func TestParseText(t *testing.T) {
	got, err := ParseText[float32]([]byte("2 2\n+nan -INF \n1.500000 -0.250000 \n\n"), core.Float32, 2, 2)
	if err != nil || !math.IsNaN(float64(got[0])) || !math.IsInf(float64(got[1]), -1) || got[2] != 1.5 || got[3] != -0.25 {
		t.Errorf("C spellings and trailing spaces: %v, %v", got, err)
	}
	cases := []struct {
		name, text string
		want       string
	}{
		{"empty", "", "line 1: the file is empty; want a header \"size dim\""},
		{"header-fields", "2\n", "line 1: 1 fields, want a header \"size dim\""},
		{"header-number", "two 2\n", `line 1: header "two 2": want two non-negative integers "size dim"`},
		{"header-negative", "-2 2\n", `line 1: header "-2 2": want two non-negative integers "size dim"`},
		{"wrong-size", "3 2\n1 2\n3 4\n5 6\n", "line 1: header says size 3, dim 2; the dat has size 2, dim 2"},
		{"wrong-dim", "2 3\n1 2 3\n4 5 6\n", "line 1: header says size 2, dim 3; the dat has size 2, dim 2"},
		{"short-line", "2 2\n +1 +2\n +3\n", "line 3 (element 1): 1 values, want dim = 2"},
		{"bad-value", "2 2\n +1 +2\n +3 x4\n", `line 3 (element 1, component 1): "x4" is not a int32 value`},
		{"out-of-range", "2 2\n +1 +2\n +3 +4294967296\n", `line 3 (element 1, component 1): "+4294967296" is not a int32 value`},
		{"truncated", "2 2\n +1 +2\n", "line 3: end of file after 1 of 2 elements"},
		{"extra", "2 2\n +1 +2\n +3 +4\n +5 +6\n", "line 4: more lines than the 2 elements the header announces"},
		{"extra-after-blank", "2 2\n +1 +2\n +3 +4\n\n +5\n", "line 5: more lines than the 2 elements the header announces"},
	}
	for _, c := range cases {
		if _, err := ParseText[int32]([]byte(c.text), core.Int32, 2, 2); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestParseBinary(t *testing.T) {
	cases := []struct {
		name string
		b    []byte
		want string
	}{
		{"short", []byte{2, 0, 0}, "3 bytes: too short for the header (int32 size, int32 dim)"},
		{"header", []byte{2, 0, 0, 0, 3, 0, 0, 0}, "header says size 2, dim 3; the dat has size 2, dim 2"},
		{"negative", []byte{0xff, 0xff, 0xff, 0xff, 2, 0, 0, 0}, "header says size -1, dim 2; the dat has size 2, dim 2"},
		{"length", append([]byte{2, 0, 0, 0, 2, 0, 0, 0}, make([]byte, 12)...), "20 bytes, want 24 (8 header bytes and 2×2 int32 values)"},
	}
	for _, c := range cases {
		if _, err := ParseBinary[int32](c.b, core.Int32, 2, 2); err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
}

func TestBinaryTooLarge(t *testing.T) {
	cases := []struct {
		typ  core.ScalarType
		dim  int
		size int64
		n    int
		want string // "" for no error
	}{
		{core.Int32, 2, 24, 2, ""},
		{core.Int32, 2, 20, 2, ""}, // too short is ParseBinary's to say
		{core.Int32, 2, 108, 2, "108 bytes, more than the 24 expected (8 header bytes and 2×2 int32 values)"},
		{core.Float64, 3, 8 + 3*8*5 + 1, 5, "129 bytes, more than the 128 expected (8 header bytes and 5×3 float64 values)"},
		{core.Float64, 1 << 32, math.MaxInt64, 1 << 32, ""}, // the expected length overflows: no limit
		{core.Float64, 1 << 30, math.MaxInt64, 1 << 30, ""}, // n×dim fits, the bytes do not
	}
	for _, c := range cases {
		err := BinaryTooLarge(c.typ, c.dim)(c.size, c.n)
		if got := ""; err != nil {
			got = err.Error()
			if got != c.want {
				t.Errorf("%s dim %d, %d bytes for %d: %q, want %q", c.typ, c.dim, c.size, c.n, got, c.want)
			}
		} else if c.want != "" {
			t.Errorf("%s dim %d, %d bytes for %d: no error, want %q", c.typ, c.dim, c.size, c.n, c.want)
		}
	}
}

func TestReadWrite(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "d.bin")
	b := FormatBinary([]int32{1, 2, 3, 4}, core.Int32, 2)
	if err := regfile.WriteFile(p, b); err != nil {
		t.Fatal(err)
	}
	got, err := Read(p, 2, BinaryTooLarge(core.Int32, 2))
	if err != nil || !bytes.Equal(got, b) {
		t.Errorf("Read: % x, %v; want % x", got, err, b)
	}
	if got, err := Read(p, 2, nil); err != nil || !bytes.Equal(got, b) {
		t.Errorf("Read without a check: % x, %v", got, err)
	}
	if _, err := Read(p, 1, BinaryTooLarge(core.Int32, 2)); err == nil || err.Error() != p+": 24 bytes, more than the 16 expected (8 header bytes and 1×2 int32 values)" {
		t.Errorf("Read of a file too large: %v", err)
	}
	if _, err := Read(filepath.Join(dir, "missing"), 2, nil); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read of a missing file: %v", err)
	}
	if _, err := Read(dir, 2, nil); !errors.Is(err, regfile.ErrNotRegular) {
		t.Errorf("Read of a directory: %v", err)
	}
	if err := regfile.WriteFile(filepath.Join(dir, "no", "such", "dir"), b); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Write under a missing directory: %v", err)
	}
	if _, err := os.Stat("/dev/full"); err == nil {
		if err := regfile.WriteFile("/dev/full", b); err == nil || !strings.Contains(err.Error(), "no space") {
			t.Errorf("Write to /dev/full: %v", err)
		}
	}
}
