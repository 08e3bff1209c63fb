package mpi_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
	"github.com/goop2/op2/internal/mpitest"
)

func world(t *testing.T) *mpi.World {
	w, err := mpi.Init(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := w.Finalize(); err != nil {
			t.Error(err)
		}
	})
	return w
}

func TestCollectivesAndMessages(t *testing.T) {
	if !mpitest.InRanks() {
		for _, np := range []int{2, 3} {
			mpitest.Run(t, np, 2*time.Minute)
		}
		return
	}
	w := world(t)
	n, r := w.Size(), w.Rank()
	if n != mpi.Launched() {
		t.Fatalf("size %d, launcher started %d", n, mpi.Launched())
	}
	// Allgather
	all := make([]byte, n)
	if err := w.Allgather([]byte{byte(r)}, all); err != nil {
		t.Fatal(err)
	}
	for i := range all {
		if all[i] != byte(i) {
			t.Fatalf("allgather %v", all)
		}
	}
	// Alltoallv: rank r sends i+1 copies of byte r to rank i.
	send := make([][]byte, n)
	for i := range send {
		send[i] = bytes.Repeat([]byte{byte(r)}, i+1)
	}
	got, err := w.Alltoallv(send)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !bytes.Equal(got[i], bytes.Repeat([]byte{byte(i)}, r+1)) {
			t.Fatalf("from %d got %v", i, got[i])
		}
	}
	// Bcast
	b := []byte("xxxx")
	if r == 0 {
		copy(b, "root")
	}
	if err := w.Bcast(b, 0); err != nil || string(b) != "root" {
		t.Fatalf("bcast %q %v", b, err)
	}
	// A ring of non-blocking messages.
	out := []int64{int64(100 + r)}
	in := []int64{0}
	next, prev := (r+1)%n, (r+n-1)%n
	if err := w.Start(
		[]mpi.Msg{{Buf: uintptr(unsafe.Pointer(&in[0])), Bytes: 8, Rank: int32(prev), Tag: 7}},
		[]mpi.Msg{{Buf: uintptr(unsafe.Pointer(&out[0])), Bytes: 8, Rank: int32(next), Tag: 7}}); err != nil {
		t.Fatal(err)
	}
	if err := w.Wait(); err != nil {
		t.Fatal(err)
	}
	if in[0] != int64(100+prev) {
		t.Fatalf("ring: got %d from %d", in[0], prev)
	}
	if !strings.Contains(w.Library(), "MPI") {
		t.Errorf("library version %q", w.Library())
	}
}

func TestPackUnpack(t *testing.T) {
	src := []int64{10, 11, 12, 13, 14}
	buf := make([]int64, 3)
	idx := []int32{4, 0, 2}
	mpi.Pack(unsafe.Pointer(&buf[0]), unsafe.Pointer(&src[0]), idx, 8)
	if buf[0] != 14 || buf[1] != 10 || buf[2] != 12 {
		t.Fatalf("pack %v", buf)
	}
	dst := make([]int64, 5)
	mpi.Unpack(unsafe.Pointer(&dst[0]), unsafe.Pointer(&buf[0]), idx, 8)
	if dst[4] != 14 || dst[0] != 10 || dst[2] != 12 || dst[1] != 0 {
		t.Fatalf("unpack %v", dst)
	}
}
