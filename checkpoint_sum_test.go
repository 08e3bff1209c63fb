package op2_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/mpitest"
)

// flipByteOf changes one byte of the only place in file path that holds
// pattern, or fails the test.
func flipByteOf(t *testing.T, path string, pattern []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(b, pattern)
	if i < 0 || bytes.Contains(b[i+1:], pattern) {
		t.Fatalf("%s holds the pattern %x %d times, want once", path, pattern, bytes.Count(b, pattern))
	}
	b[i+len(pattern)/2] ^= 0x10
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func float64Bytes(v float64) []byte {
	return binary.LittleEndian.AppendUint64(nil, math.Float64bits(v))
}

// TestRestoreRefusesDamagedFile: a checkpoint whose values changed on the
// disk after it was written (one byte of a dat's, a Global's, a
// constant's or a state entry's values) is refused, naming the entry, and
// nothing changes.
func TestRestoreRefusesDamagedFile(t *testing.T) {
	needHDF5(t)
	for _, tc := range []struct {
		name    string
		pattern []byte
		want    string
	}{
		{"dat", float64Bytes(1000.0625 + 7), `dat "q" on set "cells": dats/1`},
		{"global", float64Bytes(-4321.03125), `global "low": globals/0`},
		{"constant", float64Bytes(0.703125), `constant "ckpt_k": consts/ckpt_k`},
		{"state", []byte("marker-state-entry-0123456789"), `state entry "step": user/0`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCkptRun(t)
			defer r.k.Remove()
			q := r.q.Data()
			for i := range q {
				q[i] = 1000.0625 + float64(i)
			}
			r.low.Data()[0] = -4321.03125
			if err := r.k.Set(0.703125); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(t.TempDir(), "run.ckpt")
			if err := op2.Checkpoint(path, map[string][]byte{"step": []byte("marker-state-entry-0123456789")}); err != nil {
				t.Fatal(err)
			}
			if _, err := op2.Restore(path); err != nil {
				t.Fatalf("the undamaged file: %v", err)
			}
			flipByteOf(t, path, tc.pattern)
			r.steps(t, 1)
			before := r.result(t)
			_, err := op2.Restore(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "differ from the fingerprint") {
				t.Errorf("restoring the damaged file: %v, want an error naming %s", err, tc.want)
			}
			if !r.result(t).equal(before) {
				t.Error("a refused restore changed values")
			}
		})
	}
}

// TestCheckpointRankValues: on 2 ranks whose Global, constant and state
// entry differ (in value, not length), a checkpoint saves rank 0's, with
// their fingerprint, and restores them on every rank; with parallel HDF5
// each rank had written the fingerprint of its own values, and the file
// was refused as damaged.
func TestCheckpointRankValues(t *testing.T) {
	const ckptEnv = "OP2_TEST_CKPT_FILE"
	if mpitest.InRanks() {
		r := newCkptRun(t)
		defer r.k.Remove()
		r.steps(t, 1)
		rank := op2.Rank()
		r.low.Data()[0] = float64(rank)
		check(t, r.k.Set(0.5+float64(rank)))
		path := os.Getenv(ckptEnv)
		check(t, op2.Checkpoint(path, map[string][]byte{"time": fmt.Appendf(nil, "t=%03d", 100+rank)}))
		r.low.Data()[0] = 7
		check(t, r.k.Set(7))
		state, err := op2.Restore(path)
		if err != nil {
			t.Fatalf("rank %d restoring the file just written: %v", rank, err)
		}
		if got := r.result(t); string(state["time"]) != "t=100" || got.Low != 0 || got.K != 0.5 {
			t.Errorf("rank %d restored state %q, low %v, k %v; want rank 0's t=100, 0, 0.5", rank, state["time"], got.Low, got.K)
		}
		check(t, op2.Finalize())
		return
	}
	needHDF5(t)
	mpiRun(t, 2, 2*time.Minute, ckptEnv+"="+filepath.Join(t.TempDir(), "ranks.ckpt"))
}
