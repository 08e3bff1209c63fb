package op2_test

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	op2 "github.com/goop2/op2"
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
