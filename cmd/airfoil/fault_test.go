package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/mpitest"
	"github.com/goop2/op2/internal/testreq"
)

// TestFaultRestart runs Airfoil on 2 ranks with a checkpoint every 50
// iterations and kills rank 1 with SIGKILL after iteration 275: the job
// ends (mpirun names the dead rank) and leaves the checkpoint of
// iteration 250. Started again from it on 2 ranks, on 3 ranks (with the
// half-written file a checkpoint killed while writing leaves beside it)
// and on one process, each run prints the rms lines still to come, equal
// to those of a run never stopped.
func TestFaultRestart(t *testing.T) {
	if mpitest.InRanks() {
		o := options{backend: "sequential", partition: "rcb", ni: 24, nj: 16, iters: 600, checkpointEvery: 50}
		o.checkpoint = os.Getenv("AIRFOIL_CHECKPOINT")
		fmt.Sscan(os.Getenv("AIRFOIL_KILL"), &o.killAt, &o.killRank)
		var out bytes.Buffer
		if _, err := run(o, &out); err != nil {
			t.Fatal(err)
		}
		if op2.Rank() == 0 {
			if err := os.WriteFile(os.Getenv("AIRFOIL_OUT"), out.Bytes(), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if _, err := mpitest.Mpirun(); err != nil {
		testreq.Skip(t, "mpi", err)
	}
	var ref bytes.Buffer
	if _, err := run(options{backend: "sequential", ni: 24, nj: 16, iters: 600}, &ref); err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(ref.String(), "\n")
	after := func(iter int) string { return strings.Join(lines[iter/100:], "") } // the lines past iter
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "run.ckpt")
	job := func(ranks int, ckptPath, kill string) (string, []byte, error) {
		out := filepath.Join(dir, fmt.Sprintf("out-%d-%d", ranks, time.Now().UnixNano()))
		b, err := mpitest.Output(t, ranks, 3*time.Minute, "AIRFOIL_CHECKPOINT="+ckptPath, "AIRFOIL_KILL="+kill, "AIRFOIL_OUT="+out)
		got, _ := os.ReadFile(out)
		return string(got), b, err
	}

	_, b, err := job(2, ckpt, "275 1")
	if err == nil {
		t.Fatalf("a job whose rank 1 was killed succeeded:\n%s", b)
	}
	if !strings.Contains(string(b), "rank 1") || !strings.Contains(string(b), "signal 9") {
		t.Errorf("the killed job's output does not name rank 1 and signal 9:\n%s", b)
	}
	t.Logf("the killed job:\n%s", b)
	saved, err := os.ReadFile(ckpt)
	if err != nil {
		t.Fatalf("no checkpoint after the killed job: %v", err)
	}
	copyTo := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	three, one := copyTo("three.ckpt", saved), copyTo("one.ckpt", saved)
	// What a rank killed while writing a checkpoint leaves: a partial file.
	copyTo("three.ckpt.partial", saved[:len(saved)/3])

	for _, r := range []struct {
		ranks int
		path  string
	}{{2, ckpt}, {3, three}, {1, one}} {
		got, b, err := job(r.ranks, r.path, "")
		if err != nil {
			t.Fatalf("%d ranks resuming: %v\n%s", r.ranks, err, b)
		}
		if want := after(250); got != want {
			t.Errorf("%d ranks resuming from iteration 250 printed\n%s\nwant\n%s", r.ranks, got, want)
		}
	}
	if _, err := os.Stat(three + ".partial"); !os.IsNotExist(err) {
		t.Errorf("the partial checkpoint was not replaced: %v", err)
	}
}

// TestWriteHDF5OnRanks: airfoil -write-mesh FILE.h5 on 2 ranks writes,
// every rank its part, the file one process writes (h5diff finds no
// difference when hdf5-tools is installed; the meshes read back equal).
func TestWriteHDF5OnRanks(t *testing.T) {
	if mpitest.InRanks() {
		if _, err := run(options{backend: "sequential", partition: "rcb", ni: 24, nj: 16, writeMesh: os.Getenv("AIRFOIL_H5")}, io.Discard); err != nil {
			t.Fatal(err)
		}
		if err := op2.Finalize(); err != nil {
			t.Fatal(err)
		}
		return
	}
	dir := t.TempDir()
	one, two := filepath.Join(dir, "one.h5"), filepath.Join(dir, "two.h5")
	if _, err := run(options{ni: 24, nj: 16, writeMesh: one}, io.Discard); err != nil {
		testreq.Check(t, "hdf5", err, hdf5.ErrNoHDF5)
	}
	mpitest.Run(t, 2, 2*time.Minute, "AIRFOIL_H5="+two)
	if _, err := exec.LookPath("h5diff"); err != nil && testreq.Required(t, "hdf5") {
		t.Errorf("%s names hdf5, but h5diff is missing (apt-get install hdf5-tools): %v", testreq.Env, err)
	} else if err == nil {
		if b, err := exec.Command("h5diff", one, two).CombinedOutput(); err != nil {
			t.Errorf("h5diff: %v\n%s", err, b)
		}
	}
	a, err := readMesh(one)
	if err != nil {
		t.Fatal(err)
	}
	b, err := readMesh(two)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("the mesh written by 2 ranks differs from one process's")
	}
}
