package op2_test

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// acRecordProgram runs steps of four loops that run at once (d = q;
// q += d; e = q; q += e). In step 3, right after the automatic
// checkpoint begun at that step's first loop (e deferred: its next use
// writes it whole), a loop recorded by op2.Chain changes e (mode
// "chain"), or one on d does and the host then adds to e through Data
// (mode "host"), which turns automatic checkpoints off; a loop run at
// once then reads e. The process kills itself after step killAt.
func acRecordProgram(t *testing.T, steps, killAt int, mode string) string {
	cells := must(op2.NewSet(10, "cells"))
	q := must(op2.NewDat(cells, 1, iota32[float64](10), "q"))
	d := must(op2.NewDat[float64](cells, 1, nil, "d"))
	e := must(op2.NewDat[float64](cells, 1, nil, "e"))
	cp := op2.NewKernel(`void ar_cp(const double *a, double *b) { *b = *a; }`, "ar_cp")
	add := op2.NewKernel(`void ar_add(const double *a, double *b) { *b = fmod(*b + *a + 1, 1000.0); }`, "ar_add")
	bump := op2.NewKernel(`void ar_bump(double *b) { *b += 100; }`, "ar_bump")
	for step := 1; step <= steps; step++ {
		check(t, op2.ParLoop(cp, cells, q.Arg(op2.Read), d.Arg(op2.Write)))
		check(t, op2.ParLoop(add, cells, d.Arg(op2.Read), q.Arg(op2.RW)))
		if step == 3 {
			if mode == "host" {
				check(t, op2.Chain(func() error { return op2.ParLoop(bump, cells, d.Arg(op2.RW)) }))
				v := e.Data()
				for i := range v {
					v[i] += 100
				}
			} else {
				check(t, op2.Chain(func() error { return op2.ParLoop(bump, cells, e.Arg(op2.RW)) }))
			}
			check(t, op2.ParLoop(add, cells, e.Arg(op2.Read), q.Arg(op2.RW)))
		}
		check(t, op2.ParLoop(cp, cells, q.Arg(op2.Read), e.Arg(op2.Write)))
		check(t, op2.ParLoop(add, cells, e.Arg(op2.Read), q.Arg(op2.RW)))
		if step == killAt {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
		}
	}
	return fmt.Sprint(must(q.Gather()))
}

// TestAutoCheckpointFinishedWhenLoopsRecord: a loop recorded (Chain)
// while an automatic checkpoint waits for the dats it deferred finishes
// that checkpoint with their values then, before the recorded loop or a
// write through Data changes them: a run killed later and restarted
// gives the uninterrupted run's results. The checkpoint was finished
// with the changed values, and the restart applied the change twice.
func TestAutoCheckpointFinishedWhenLoopsRecord(t *testing.T) {
	if mpitest.InRanks() {
		var killAt int
		fmt.Sscan(os.Getenv("AR_KILL"), &killAt)
		out := acRecordProgram(t, 6, killAt, os.Getenv("AR_MODE"))
		if op2.Rank() == 0 {
			check(t, os.WriteFile(os.Getenv("AR_OUT"), []byte(out), 0o644))
		}
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	for _, mode := range []string{"chain", "host"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			run := func(env ...string) (string, error) {
				out := filepath.Join(dir, fmt.Sprintf("out-%d", time.Now().UnixNano()))
				b, err := mpitest.Output(t, 1, 2*time.Minute, append(env, "AR_OUT="+out, "AR_MODE="+mode)...)
				if err != nil {
					return string(b), err
				}
				got, err := os.ReadFile(out)
				return string(got), err
			}
			want, err := run()
			if err != nil {
				t.Fatalf("uninterrupted: %v\n%s", err, want)
			}
			env := []string{"OP2_CHECKPOINT=" + filepath.Join(dir, "c.ckpt"), "OP2_CHECKPOINT_EVERY=4"}
			if out, err := run(append(env, "AR_KILL=5")...); err == nil {
				t.Fatalf("the killed run succeeded\n%s", out)
			}
			got, err := run(env...)
			if err != nil {
				t.Fatalf("restart: %v\n%s", err, got)
			}
			if got != want {
				t.Errorf("restarted run gives %s, the uninterrupted run %s", got, want)
			}
		})
	}
}
