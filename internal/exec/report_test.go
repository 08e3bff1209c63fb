package exec_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2/internal/exec"
)

func TestTimingRecordMeanAndBandwidth(t *testing.T) {
	cases := []struct {
		r    exec.TimingRecord
		mean time.Duration
		gbps float64
	}{
		{exec.TimingRecord{}, 0, 0},
		{exec.TimingRecord{Calls: 4, Run: 2 * time.Second, Bytes: 6e9}, 500 * time.Millisecond, 3},
		{exec.TimingRecord{Calls: 3, Run: 10 * time.Nanosecond}, 3 * time.Nanosecond, 0},
		{exec.TimingRecord{Calls: 0, Run: time.Second, Bytes: 1e9}, 0, 1},
		{exec.TimingRecord{Calls: 1, Run: -time.Second, Bytes: 1e9}, -time.Second, 0},
	}
	for _, c := range cases {
		if got := c.r.Mean(); got != c.mean {
			t.Errorf("%+v: Mean %v, want %v", c.r, got, c.mean)
		}
		if got := c.r.GBPerSecond(); got != c.gbps {
			t.Errorf("%+v: GBPerSecond %v, want %v", c.r, got, c.gbps)
		}
	}
}

func TestPlainName(t *testing.T) {
	cases := []struct {
		s    string
		want bool
	}{
		{"res_calc", true},
		{"ячейки µ", true},
		{"plain set", true},
		{"", false},
		{"two\nlines", false},
		{"tab\there", false},
		{"bell\a", false},
		{"bad\xffutf8", false},
		{" padded", false},
		{"padded ", false},
		{`"quoted"`, false},
		{`in"side`, true},
		{"nbsp\u00a0x", false}, // unicode.IsPrint takes only the ASCII space
		{"zero\u200bwidth", false},
	}
	for _, c := range cases {
		if got := exec.PlainName(c.s); got != c.want {
			t.Errorf("PlainName(%q) = %v, want %v", c.s, got, c.want)
		}
	}
}

// recs are two loops, the second tuned, with names the table must quote
// and shorten.
var recs = []exec.TimingRecord{
	{Kernel: "res_calc", Set: "edges", Backend: "sequential", Calls: 4, Run: 2 * time.Second, Plan: 250 * time.Millisecond,
		Compile: 1500 * time.Millisecond, Bytes: 8e9, Moved: 8e9},
	{Kernel: "k_" + strings.Repeat("abcdefghij", 6) + "_end", Set: "two\nlines", Backend: "openmp", Calls: 1, Run: 1000 * time.Microsecond,
		Bytes: 1e6, Moved: 1e6, Tuned: "owner, block 1024"},
}

func TestWriteTimingTable(t *testing.T) {
	cases := []struct {
		name        string
		recs        []exec.TimingRecord
		rank, ranks int
		want        string
	}{
		{"empty", nil, 0, 1, "" +
			"loop       set  backend    calls     time s     mean µs    plan s  compile s     GB/s\n" +
			"all loops                      0     0.0000                0.0000     0.0000     0.00\n"},
		{"one", recs[:1], 0, 1, "" +
			"loop       set    backend       calls     time s     mean µs    plan s  compile s     GB/s\n" +
			"res_calc   edges  sequential        4     2.0000    500000.0    0.2500     1.5000     4.00\n" +
			"all loops                           4     2.0000                0.2500     1.5000     4.00\n"},
		// An untuned loop in a tuned table shows "" (its empty setting, quoted).
		{"tuned-quoted-shortened-ranks", recs, 1, 3, "" +
			"rank 1 of 3\n" +
			"loop                                      set           backend       calls     time s     mean µs    plan s  compile s     GB/s  tuned\n" +
			"res_calc                                  edges         sequential        4     2.0000    500000.0    0.2500     1.5000     4.00  \"\"\n" +
			"k_abcdefghijabcdefg…efghijabcdefghij_end  \"two\\nlines\"  openmp            1     0.0010      1000.0    0.0000     0.0000     1.00  owner, block 1024\n" +
			"all loops                                                                 5     2.0010                0.2500     1.5000     4.00\n"},
		{"tuned-setting-quoted", []exec.TimingRecord{{Kernel: "k", Set: "s", Backend: "b", Tuned: "bad\tsetting"}}, 0, 2, "" +
			"rank 0 of 2\n" +
			"loop       set  backend    calls     time s     mean µs    plan s  compile s     GB/s  tuned\n" +
			"k          s    b              0     0.0000         0.0    0.0000     0.0000     0.00  \"bad\\tsetting\"\n" +
			"all loops                      0     0.0000                0.0000     0.0000     0.00\n"},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := exec.WriteTimingTable(&b, c.recs, c.rank, c.ranks); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if b.String() != c.want {
			t.Errorf("%s: got\n%s\nwant\n%s", c.name, b.String(), c.want)
		}
	}
}

func TestWriteTimingCSV(t *testing.T) {
	var b bytes.Buffer
	if err := exec.WriteTimingCSV(&b, recs, 2); err != nil {
		t.Fatal(err)
	}
	want := "rank,kernel,set,backend,calls,time_s,mean_s,plan_s,compile_s,bytes,gb_per_s,tuned\n" +
		"2,res_calc,edges,sequential,4,2,0.5,0.25,1.5,8e+09,4,\n" +
		"2,k_" + strings.Repeat("abcdefghij", 6) + "_end,\"two\nlines\",openmp,1,0.001,0.001,0,0,1e+06,1,\"owner, block 1024\"\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}

// failWriter fails every write after the first ok ones.
type failWriter struct{ ok int }

var errFull = errors.New("disk full")

func (w *failWriter) Write(p []byte) (int, error) {
	if w.ok == 0 {
		return 0, errFull
	}
	w.ok--
	return len(p), nil
}

func TestTimingWritersReportErrors(t *testing.T) {
	for ok := 0; ok < 4; ok++ {
		if err := exec.WriteTimingTable(&failWriter{ok: ok}, recs, 0, 2); !errors.Is(err, errFull) {
			t.Errorf("table, failing after %d writes: %v", ok, err)
		}
	}
	if err := exec.WriteTimingCSV(&failWriter{}, recs, 0); !errors.Is(err, errFull) {
		t.Errorf("CSV: %v", err)
	}
}
