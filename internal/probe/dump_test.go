package probe_test

import (
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goop2/op2"
)

// Dumps of dats never written (nil data) and written only on the device.
func TestDumpNeverWritten(t *testing.T) {
	each(t, func(t *testing.T, b bk) {
		dir := t.TempDir()
		s := must(op2.NewSet(3, "s"))
		x := must(op2.NewDat[float64](s, 2, nil, "x"))
		check(t, x.WriteText(filepath.Join(dir, "x.txt")))
		check(t, x.WriteBinary(filepath.Join(dir, "x.bin")))
		txt, _ := os.ReadFile(filepath.Join(dir, "x.txt"))
		if !strings.HasPrefix(string(txt), "3 2\n") || strings.Count(string(txt), "+0.000000000000000E+00") != 6 {
			t.Errorf("text of a never-written dat:\n%s", txt)
		}
		bin, _ := os.ReadFile(filepath.Join(dir, "x.bin"))
		if len(bin) != 8+48 {
			t.Errorf("binary length %d", len(bin))
		}
		// Written by a device loop only, dumped, then read back into a fresh dat and used on device.
		y := must(op2.NewDat(s, 1, []float64{1, 2, 3}, "y"))
		check(t, op2.ParLoop(kScale, s, y.Arg(op2.RW)))
		check(t, y.WriteBinary(filepath.Join(dir, "y.bin")))
		check(t, y.WriteText(filepath.Join(dir, "y.txt")))
		check(t, op2.ParLoop(kScale, s, y.Arg(op2.RW))) // device copy must still be valid: 7 11 15
		if got := y.DataRO(); !slices.Equal(got, []float64{7, 11, 15}) {
			t.Errorf("after dump + loop: %v", got)
		}
		z := must(op2.NewDat(s, 1, []float64{0, 0, 0}, "z"))
		check(t, op2.ParLoop(kScale, s, z.Arg(op2.RW))) // device copy 1 1 1
		check(t, z.ReadBinary(filepath.Join(dir, "y.bin")))
		g := must(op2.NewGlobal(1, []float64{0}, "g"))
		check(t, op2.ParLoop(kSum, s, z.Arg(op2.Read), g.Arg(op2.Inc)))
		if g.Value() != 3+5+7 {
			t.Errorf("loop after ReadBinary onto a device dat sums %v, want 15", g.Value())
		}
		check(t, z.ReadText(filepath.Join(dir, "y.txt")))
		check(t, op2.ParLoop(kScale, s, z.Arg(op2.RW)))
		if got := z.DataRO(); !slices.Equal(got, []float64{7, 11, 15}) {
			t.Errorf("loop after ReadText onto a device dat: %v", got)
		}
	})
}

func TestDumpRoundTripTypes(t *testing.T) {
	dir := t.TempDir()
	s := must(op2.NewSet(3, "s"))
	u := must(op2.NewDat(s, 1, []uint32{0, math.MaxUint32, 1 << 31}, "u"))
	check(t, u.WriteText(filepath.Join(dir, "u.txt")))
	u2 := must(op2.NewDat[uint32](s, 1, nil, "u2"))
	if err := u2.ReadText(filepath.Join(dir, "u.txt")); err != nil {
		txt, _ := os.ReadFile(filepath.Join(dir, "u.txt"))
		t.Fatalf("uint32 text round trip: %v\n%s", err, txt)
	}
	if got := u2.DataRO(); !slices.Equal(got, u.DataRO()) {
		t.Errorf("uint32 round trip %v", got)
	}
	l := must(op2.NewDat(s, 1, []int64{math.MinInt64, math.MaxInt64, -1}, "l"))
	check(t, l.WriteText(filepath.Join(dir, "l.txt")))
	l2 := must(op2.NewDat[int64](s, 1, nil, "l2"))
	check(t, l2.ReadText(filepath.Join(dir, "l.txt")))
	if got := l2.DataRO(); !slices.Equal(got, l.DataRO()) {
		t.Errorf("int64 round trip %v", got)
	}
	f := must(op2.NewDat(s, 2, []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, 5e-324, 0}, "f"))
	check(t, f.WriteText(filepath.Join(dir, "f.txt")))
	f2 := must(op2.NewDat[float64](s, 2, nil, "f2"))
	if err := f2.ReadText(filepath.Join(dir, "f.txt")); err != nil {
		txt, _ := os.ReadFile(filepath.Join(dir, "f.txt"))
		t.Fatalf("float64 special values round trip: %v\n%s", err, txt)
	}
	got := f2.DataRO()
	if !math.IsNaN(got[0]) || !math.IsInf(got[1], 1) || !math.IsInf(got[2], -1) || got[3] != 1e308 {
		t.Errorf("special values: %v", got)
	}
	g := must(op2.NewDat(s, 1, []float32{float32(math.NaN()), float32(math.Inf(1)), 1e-30}, "g"))
	check(t, g.WriteText(filepath.Join(dir, "g.txt")))
	g2 := must(op2.NewDat[float32](s, 1, nil, "g2"))
	if err := g2.ReadText(filepath.Join(dir, "g.txt")); err != nil {
		txt, _ := os.ReadFile(filepath.Join(dir, "g.txt"))
		t.Fatalf("float32 special values: %v\n%s", err, txt)
	}
}

func TestDumpEmptySet(t *testing.T) {
	dir := t.TempDir()
	s := must(op2.NewSet(0, "e"))
	x := must(op2.NewDat[float64](s, 3, nil, "x"))
	check(t, x.WriteText(filepath.Join(dir, "x.txt")))
	check(t, x.WriteBinary(filepath.Join(dir, "x.bin")))
	check(t, x.ReadText(filepath.Join(dir, "x.txt")))
	check(t, x.ReadBinary(filepath.Join(dir, "x.bin")))
}

func TestDumpMalformedExtra(t *testing.T) {
	dir := t.TempDir()
	s := must(op2.NewSet(2, "s"))
	cases := map[string]string{
		"negative-header":  "-2 1\n+1\n+2\n",
		"header-extra":     "2 1 7\n+1\n+2\n",
		"too-many-values":  "2 1\n+1 +5\n+2\n",
		"int-float-syntax": "2 1\n+1.5\n+2\n",
		"trailing-garbage": "2 1\n+1\n+2\nhello\n",
	}
	for name, text := range cases {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(dir, name)
			check(t, os.WriteFile(p, []byte(text), 0o600))
			d := must(op2.NewDat(s, 1, []int32{9, 9}, "d"))
			if err := d.ReadText(p); err == nil {
				t.Errorf("ReadText accepted %q: %v", text, d.DataRO())
			}
			if got := d.DataRO(); !slices.Equal(got, []int32{9, 9}) {
				t.Errorf("changed: %v", got)
			}
		})
	}
	// binary: negative size / dim header with matching length
	bins := map[string][]byte{
		"neg":   {0xfe, 0xff, 0xff, 0xff, 1, 0, 0, 0},
		"huge":  {0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff, 0x7f},
		"extra": {2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0},
		"empty": {},
	}
	for name, b := range bins {
		t.Run("bin-"+name, func(t *testing.T) {
			p := filepath.Join(dir, name+".bin")
			check(t, os.WriteFile(p, b, 0o600))
			d := must(op2.NewDat(s, 1, []int32{9, 9}, "d"))
			if err := d.ReadBinary(p); err == nil {
				t.Errorf("ReadBinary accepted: %v", d.DataRO())
			}
		})
	}
}

// WriteText of the largest double writes 16 significant digits, rounded up past
// MaxFloat64; ReadText then refuses the file the library itself wrote.
func TestDumpTextMaxFloat64RoundTrip(t *testing.T) {
	dir := t.TempDir()
	s := must(op2.NewSet(2, "s"))
	f := must(op2.NewDat(s, 1, []float64{math.MaxFloat64, -math.MaxFloat64}, "f"))
	p := filepath.Join(dir, "f.txt")
	check(t, f.WriteText(p))
	f2 := must(op2.NewDat[float64](s, 1, nil, "f2"))
	if err := f2.ReadText(p); err != nil {
		txt, _ := os.ReadFile(p)
		t.Fatalf("ReadText of a file WriteText wrote: %v\n%s", err, txt)
	}
	// 16 digits are not exact, but the value must be finite and within one ulp-ish.
	if got := f2.DataRO(); math.IsInf(got[0], 0) || got[0] < 1.79769313486231e308 {
		t.Errorf("read back %v", got)
	}
}
