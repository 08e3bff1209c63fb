package op2_test

import (
	"context"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/h5"
)

// TestCheckpointStateKeys: every Go string round-trips as a state key:
// long keys that differ only past 255 bytes, NULs, the empty key,
// bytes that are not UTF-8; and every value stays with its key.
func TestCheckpointStateKeys(t *testing.T) {
	needHDF5(t)
	long := strings.Repeat("k", 300)
	for _, c := range []struct {
		name  string
		state map[string][]byte
	}{
		{"long keys", map[string][]byte{long + "1": []byte("one"), long + "2": []byte("two")}},
		{"NUL", map[string][]byte{"a\x00b": []byte("ab"), "a": []byte("a"), "a\x00": []byte("a0")}},
		{"empty key and value", map[string][]byte{"": []byte("empty key"), "empty value": {}}},
		{"not UTF-8", map[string][]byte{"\xff\xfe\x00": {0, 1, 2}, "ü/dats/0": []byte("slash")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "keys.ckpt")
			check(t, op2.Checkpoint(path, c.state))
			got, err := op2.Restore(path)
			check(t, err)
			if !maps.EqualFunc(got, c.state, slices.Equal) {
				t.Errorf("state %q came back as %q", c.state, got)
			}
		})
	}
}

// TestCheckpointNames: sets, dats and Globals of any name checkpoint and
// restore in the same program: empty, over 255 bytes (two dats whose
// names differ only past byte 255 each get their own values back), with
// NULs, not UTF-8.
func TestCheckpointNames(t *testing.T) {
	needHDF5(t)
	long := strings.Repeat("n", 300)
	for _, c := range []struct {
		name           string
		set, dat, dat2 string
		global         string
	}{
		{"empty", "", "", "", ""},
		{"long", long, long + "a", long + "b", long},
		{"NUL", "s\x00et", "d\x00a", "d\x00b", "g\x00"},
		{"not UTF-8", "\xff", "\xfe", "\xfd", "\xfc"},
	} {
		t.Run(c.name, func(t *testing.T) {
			set := must(op2.NewSet(3, c.set))
			a := must(op2.NewDat(set, 1, []float64{1, 2, 3}, c.dat))
			b := must(op2.NewDat(set, 1, []float64{4, 5, 6}, c.dat2))
			g := must(op2.NewGlobal(1, []int32{7}, c.global))
			path := filepath.Join(t.TempDir(), "names.ckpt")
			check(t, op2.Checkpoint(path, nil))
			copy(a.Data(), []float64{0, 0, 0})
			copy(b.Data(), []float64{0, 0, 0})
			g.Data()[0] = 0
			_, err := op2.Restore(path)
			check(t, err)
			if !slices.Equal(a.DataRO(), []float64{1, 2, 3}) || !slices.Equal(b.DataRO(), []float64{4, 5, 6}) || g.DataRO()[0] != 7 {
				t.Errorf("restored %v %v %v, want [1 2 3] [4 5 6] 7", a.DataRO(), b.DataRO(), g.DataRO())
			}
			runtime.KeepAlive(set)
		})
	}
}

// TestRestoreFormat1 restores testdata/checkpoint_v1.h5, written by
// GoOP2 before names were kept as data (checkpoint format 1, names in
// attributes), into the program that wrote it: files written before
// stay readable. It runs in a child process, where no other test's
// dats are alive: Restore wants every live dat in the file.
func TestRestoreFormat1(t *testing.T) {
	const childEnv = "OP2_TEST_RESTORE_FORMAT1"
	if os.Getenv(childEnv) == "" {
		needHDF5(t)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestRestoreFormat1$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), childEnv+"=1", "TMPDIR="+t.TempDir())
		if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestRestoreFormat1") {
			t.Fatalf("the child restoring testdata/checkpoint_v1.h5: %v\n%s", err, out)
		}
		return
	}
	cells := must(op2.NewSet(3, "v1cells"))
	q := must(op2.NewDat[float64](cells, 2, nil, "v1q"))
	n := must(op2.NewDat[int32](cells, 1, nil, "v1n"))
	g := must(op2.NewGlobal[float64](1, nil, "v1g"))
	c := must(op2.NewConst(1, []int32{0}, "ckpt_v1_c"))
	defer c.Remove()
	state, err := op2.Restore(filepath.Join("testdata", "checkpoint_v1.h5"))
	check(t, err)
	if !slices.Equal(q.DataRO(), []float64{1, 2, 3, 4, 5, 6}) || !slices.Equal(n.DataRO(), []int32{-1, 0, 7}) ||
		g.DataRO()[0] != 2.5 || c.Value()[0] != -5 {
		t.Errorf("restored %v %v %v %v, want [1 2 3 4 5 6] [-1 0 7] 2.5 -5", q.DataRO(), n.DataRO(), g.DataRO(), c.Value())
	}
	if want := map[string][]byte{"step": []byte("12"), "t": []byte("0.5")}; !maps.EqualFunc(state, want, slices.Equal) {
		t.Errorf("state %q, want %q", state, want)
	}
}

// TestRestoreRefusesBadNames: a checkpoint whose names do not add up (a
// name cut short, bytes left over, no names at all, more names counted
// than there are bytes: nothing is allocated for them) or of a format this
// GoOP2 does not know is refused, naming the file and the reason.
func TestRestoreRefusesBadNames(t *testing.T) {
	needHDF5(t)
	for _, c := range []struct {
		name    string
		version int32
		keys    int32  // the header's count of state entries
		names   []byte // nil: no op2_names
		want    string
	}{
		{"cut short", 2, 1, []byte{5, 'a'}, "op2_names is cut short"},
		{"left over", 2, 1, []byte{1, 'a', 'b'}, "op2_names holds 1 bytes after the names"},
		{"missing", 2, 1, nil, "op2_names"},
		{"counts past the names", 2, 1 << 30, []byte{0}, "too few for the 1073741824 names"},
		{"future format", 3, 1, []byte{1, 'a'}, "checkpoint format 3, this GoOP2 reads formats 1 to 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "forged.ckpt")
			f, err := h5.Create(path)
			check(t, err)
			head := []int32{c.version, 1, 0, 0, 0, c.keys}
			check(t, f.Write("op2_checkpoint", h5.Int32, 1, len(head), 1, unsafe.Pointer(&head[0])))
			if c.names != nil {
				check(t, f.Write("op2_names", h5.Uint8, 1, len(c.names), 1, unsafe.Pointer(&c.names[0])))
			}
			v := []byte("x")
			check(t, f.Write("user/0", h5.Uint8, 1, 1, 1, unsafe.Pointer(&v[0])))
			check(t, f.Close())
			_, err = op2.Restore(path)
			wantErr(t, err, path, c.want)
		})
	}
}
