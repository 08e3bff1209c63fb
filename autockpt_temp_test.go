package op2_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// tempDatProgram is a time-stepping program that declares a scratch Dat
// "tmp" in every step and makes its kernels again in every step, as
// programs do: tmp is written from q, changed twice and added into q
// twice. It kills itself with SIGKILL after step killAt (0: never) and
// returns q's values.
func tempDatProgram(t *testing.T, steps, killAt int) string {
	t.Helper()
	cells := must(op2.NewSet(8, "cells"))
	init := make([]float64, 8)
	for i := range init {
		init[i] = float64(i + 1)
	}
	q := must(op2.NewDat(cells, 1, init, "q"))
	var kept *op2.Dat[float64]
	if os.Getenv("OP2_TEST_TEMP_KEEP") != "" {
		kept = must(op2.NewDat[float64](cells, 1, nil, "tmp"))
	}
	defer runtime.KeepAlive(kept)
	for step := 1; step <= steps; step++ {
		wr := op2.NewKernel(`void tmp_wr(const double *q, double *t) { t[0] = fmod(q[0]*3 + 1, 1000003.0); }`, "tmp_wr")
		use := op2.NewKernel(`void tmp_use(const double *t, double *q) { q[0] = fmod(q[0] + 2*t[0], 1000003.0); }`, "tmp_use")
		mod := op2.NewKernel(`void tmp_mod(double *t) { t[0] = fmod(t[0]*5 + 7, 1000003.0); }`, "tmp_mod")
		tmp := must(op2.NewDat[float64](cells, 1, nil, "tmp"))
		check(t, op2.ParLoop(wr, cells, q.Arg(op2.Read), tmp.Arg(op2.Write)))
		check(t, op2.ParLoop(mod, cells, tmp.Arg(op2.RW)))
		check(t, op2.ParLoop(use, cells, tmp.Arg(op2.Read), q.Arg(op2.RW)))
		check(t, op2.ParLoop(mod, cells, tmp.Arg(op2.RW)))
		check(t, op2.ParLoop(use, cells, tmp.Arg(op2.Read), q.Arg(op2.RW)))
		if step == killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	return fmt.Sprint(must(q.Gather()))
}

// TestAutoCheckpointTemporaryDats: a program that declares a scratch Dat
// of one name in every step, and its kernels too, restarts from an
// automatic checkpoint to the values of a run never stopped. The watch for
// the loops' period held every step's scratch Dat alive, so the file held
// one per step and a restart restored the oldest's values into the
// program's one (wrong results, no error); and kernels made again in
// every step never repeated, so no checkpoint came before 1000 loops.
func TestAutoCheckpointTemporaryDats(t *testing.T) {
	const outEnv, killEnv = "OP2_TEST_TEMP_OUT", "OP2_TEST_TEMP_KILL"
	if mpitest.InRanks() {
		var killAt int
		fmt.Sscan(os.Getenv(killEnv), &killAt)
		got := tempDatProgram(t, 250, killAt)
		if op2.Rank() == 0 {
			check(t, os.WriteFile(os.Getenv(outEnv), []byte(got), 0o644))
		}
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "temp.ckpt")
	run := func(withCkpt bool, kill int) (string, error) {
		out := filepath.Join(dir, fmt.Sprintf("out-%d", time.Now().UnixNano()))
		env := []string{outEnv + "=" + out, fmt.Sprintf("%s=%d", killEnv, kill), "OP2_CHECKPOINT_EVERY=6"}
		if withCkpt {
			env = append(env, "OP2_CHECKPOINT="+ckpt)
		}
		if b, err := mpitest.Output(t, 1, 2*time.Minute, env...); err != nil {
			return string(b), err
		}
		got, err := os.ReadFile(out)
		return string(got), err
	}
	want, err := run(false, 0)
	if err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, want)
	}
	if out, err := run(true, 220); err == nil {
		t.Fatalf("the run killed after step 220 succeeded:\n%s", out)
	}
	if _, err := os.Stat(ckpt); err != nil {
		t.Fatalf("no checkpoint after 1100 loops: %v", err)
	}
	if names := datNames(t, ckpt); strings.Join(names, " ") != "q tmp" {
		t.Errorf("the checkpoint holds the dats %q, want q and the step's tmp", names)
	}
	if got, err := run(true, 0); err != nil || got != want {
		t.Errorf("the restart: %v\n%s\nwant\n%s", err, got, want)
	}
	// A restart of a program that now drops no tmp but keeps two alive
	// is refused, the error naming the automatic restart (not Restore,
	// which the program never called).
	t.Setenv("OP2_TEST_TEMP_KEEP", "1")
	out, err := run(true, 0)
	if err == nil || !strings.Contains(out, "restart from the automatic checkpoint") || strings.Contains(out, "op2.Restore") {
		t.Errorf("a restart holding two tmp dats: %v\n%s", err, out)
	}
}

// TestRestoreRefusesAmbiguousDats: a file holding more dats of one name,
// set, dim and type than the program declares is refused, naming them:
// the program's one took the first's values (a dat the writer held and
// the program has since dropped), with no error.
func TestRestoreRefusesAmbiguousDats(t *testing.T) {
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "dup.ckpt")
	set := must(op2.NewSet(4, "dup_s"))
	first := must(op2.NewDat(set, 1, []float64{1, 1, 1, 1}, "t"))
	second := must(op2.NewDat(set, 1, []float64{2, 2, 2, 2}, "t"))
	check(t, op2.Checkpoint(path, nil))
	runtime.KeepAlive(first) // and no further: the program drops it
	runtime.GC()
	_, err := op2.Restore(path)
	if err == nil || !strings.Contains(err.Error(), `holds 2 dats "t" on set "dup_s" of dim 1 and type double, and the program declares 1`) {
		t.Errorf("Restore with one of the two dats: %v", err)
	}
	if got := second.DataRO(); got[0] != 2 {
		t.Errorf("the refused Restore changed t: %v", got)
	}
}

// TestCheckpointOverDirectoryLeavesNoPartial: a checkpoint whose rename
// fails (the path is a directory) is an error and leaves no path.partial
// behind.
func TestCheckpointOverDirectoryLeavesNoPartial(t *testing.T) {
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "dir.ckpt")
	check(t, os.Mkdir(path, 0o755))
	check(t, os.WriteFile(filepath.Join(path, "inside"), nil, 0o644))
	set := must(op2.NewSet(4, "dir_s"))
	d := must(op2.NewDat(set, 1, []float64{1, 2, 3, 4}, "dir_d"))
	if err := op2.Checkpoint(path, nil); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("Checkpoint over a directory: %v", err)
	}
	runtime.KeepAlive(d)
	if _, err := os.Stat(path + ".partial"); err == nil {
		t.Errorf("%s.partial was left behind", path)
	}
}

// TestRestoreOmittedTwin: a file that saved two dats of one name restores
// into a program that now leaves one of them out (SetNoCheckpoint), each
// file entry to its own dat, whichever is left out.
func TestRestoreOmittedTwin(t *testing.T) {
	needHDF5(t)
	for _, omitFirst := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "twin.ckpt")
		set := must(op2.NewSet(4, "twin_s"))
		a := must(op2.NewDat(set, 1, []float64{1, 1, 1, 1}, "t"))
		b := must(op2.NewDat(set, 1, []float64{2, 2, 2, 2}, "t"))
		check(t, op2.Checkpoint(path, nil))
		copy(a.Data(), []float64{7, 7, 7, 7})
		copy(b.Data(), []float64{8, 8, 8, 8})
		left, kept, want := b, a, 1.0
		if omitFirst {
			left, kept, want = a, b, 2
		}
		left.SetNoCheckpoint(true)
		if _, err := op2.Restore(path); err != nil {
			t.Fatalf("omitting the %v one: %v", map[bool]string{true: "first", false: "second"}[omitFirst], err)
		}
		if got := kept.DataRO()[0]; got != want {
			t.Errorf("omitting the %v one: the other restored %v, want %v", map[bool]string{true: "first", false: "second"}[omitFirst], got, want)
		}
		if got := left.DataRO()[0]; got != 7 && got != 8 {
			t.Errorf("the dat left out changed: %v", got)
		}
	}
}

// TestRestoreRefusesAnotherMesh: a checkpoint restores only onto the
// mesh it was written on: a program declaring a map of the same name and
// sizes but other entries (another mesh, or this one numbered otherwise)
// is refused, naming the map, and nothing changes. The same mesh
// renumbered (op2.Renumber) still restores.
func TestRestoreRefusesAnotherMesh(t *testing.T) {
	needHDF5(t)
	path := filepath.Join(t.TempDir(), "mesh.ckpt")
	declare := func(table []int32) (*op2.Map, *op2.Dat[float64]) {
		nodes := must(op2.NewSet(4, "am_nodes"))
		edges := must(op2.NewSet(4, "am_edges"))
		m := must(op2.NewMap(edges, nodes, 2, table, "am_pedge"))
		q := must(op2.NewDat(nodes, 1, []float64{1, 2, 3, 4}, "am_q"))
		return m, q
	}
	m1, q1 := declare([]int32{0, 1, 1, 2, 2, 3, 3, 0})
	check(t, op2.Checkpoint(path, nil))
	runtime.KeepAlive(m1)
	runtime.KeepAlive(q1)
	runtime.GC()

	m2, q2 := declare([]int32{0, 2, 2, 1, 1, 3, 3, 0})
	copy(q2.Data(), []float64{5, 6, 7, 8})
	_, err := op2.Restore(path)
	if err == nil || !strings.Contains(err.Error(), `another map "am_pedge" from set "am_edges" to set "am_nodes"`) {
		t.Errorf("Restore onto another mesh: %v", err)
	}
	if got := q2.DataRO(); got[0] != 5 {
		t.Errorf("the refused Restore changed am_q: %v", got)
	}
	runtime.KeepAlive(m2)
	runtime.GC()

	m3, q3 := declare([]int32{0, 1, 1, 2, 2, 3, 3, 0})
	if _, err := op2.Renumber(op2.RCMOrdering(m3)); err != nil {
		t.Fatal(err)
	}
	if _, err := op2.Restore(path); err != nil {
		t.Errorf("Restore onto the same mesh renumbered: %v", err)
	}
	runtime.KeepAlive(m3)
	runtime.KeepAlive(q3)
}
