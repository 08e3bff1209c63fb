package op2_test

import (
	"math"
	"os"
	"path/filepath"
	"testing"

	op2 "github.com/goop2/op2"
)

// TestDumpTextLargestDoubles: WriteText's 16 significant digits round the
// largest doubles up beyond the range; ReadText reads them back as the
// largest doubles, and still refuses a larger value.
func TestDumpTextLargestDoubles(t *testing.T) {
	check(t, op2.Configure(op2.Config{Backend: "sequential"}))
	s := must(op2.NewSet(3, "s"))
	vals := []float64{math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	f := must(op2.NewDat(s, 1, vals, "f"))
	p := filepath.Join(t.TempDir(), "f.txt")
	check(t, f.WriteText(p))
	g := must(op2.NewDat[float64](s, 1, nil, "g"))
	check(t, g.ReadText(p))
	if got := g.DataRO(); got[0] != math.MaxFloat64 || got[1] != -math.MaxFloat64 || got[2] != math.SmallestNonzeroFloat64 {
		t.Errorf("read back %v, wrote %v", got, vals)
	}
	bad := filepath.Join(t.TempDir(), "bad.txt")
	check(t, os.WriteFile(bad, []byte("3 1\n +1.797693134862317E+308\n +1\n +2\n"), 0o600))
	wantErr(t, g.ReadText(bad), "line 2")
}
