package main

import (
	"github.com/goop2/op2"
	opexec "github.com/goop2/op2/internal/exec"
)

// settle readies a timed run to measure the steady state: it runs the
// recorded loops (op2.Wait) and waits for the programs the defaults build
// in the background on a first run (fused loops, tile forms) and the
// tile schedules they compute there, so that the timed run uses them
// from its first forcing. When one was still being built, or always when
// always is set (runs whose output is compared must all do the same), it
// then runs warm (more warm-up iterations), in which the next forcings
// load them or start the next ones (one at a time), until a warm run
// leaves nothing pending (at most settleRounds runs).
func settle(always bool, warm func() error) error {
	if err := op2.Wait(); err != nil {
		return err
	}
	pending := opexec.PendingBuilds() > 0
	opexec.WaitBuilds()
	if !pending && !always {
		return nil
	}
	for range settleRounds {
		if err := warm(); err != nil {
			return err
		}
		if err := op2.Wait(); err != nil {
			return err
		}
		if opexec.PendingBuilds() == 0 {
			return nil
		}
		opexec.WaitBuilds()
	}
	return nil
}

// settleRounds bounds settle's warm runs: Airfoil's defaults start a
// build or a schedule in each of its first few.
const settleRounds = 8
