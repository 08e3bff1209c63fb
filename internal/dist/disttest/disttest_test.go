package disttest

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/goop2/op2/internal/mpi"
)

// pins keeps the messages' buffers on the heap and in place, as
// mpi.Msg's contract requires (a buffer whose address only a uintptr
// holds could otherwise live on a goroutine's stack, which moves).
var (
	pinMu sync.Mutex
	pins  runtime.Pinner
)

func msg(b []byte, rank, tag int) mpi.Msg {
	pinMu.Lock()
	pins.Pin(&b[0])
	pinMu.Unlock()
	return mpi.Msg{Buf: uintptr(unsafe.Pointer(&b[0])), Bytes: int64(len(b)), Rank: int32(rank), Tag: int32(tag)}
}

func TestCollectives(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			errs := Run(n, 0, func(p *Proc) error {
				r := p.Rank()
				send := make([][]byte, n)
				for q := range send {
					send[q] = []byte(fmt.Sprintf("%d->%d", r, q))
				}
				got, err := p.Alltoallv(send)
				if err != nil {
					return err
				}
				for q, b := range got {
					if want := fmt.Sprintf("%d->%d", q, r); string(b) != want {
						return fmt.Errorf("Alltoallv from rank %d: got %q, want %q", q, b, want)
					}
				}
				all := make([]byte, 2*n)
				if err := p.Allgather([]byte{byte(r), byte(2 * r)}, all); err != nil {
					return err
				}
				for q := range n {
					if all[2*q] != byte(q) || all[2*q+1] != byte(2*q) {
						return fmt.Errorf("Allgather: got %v", all)
					}
				}
				or := []byte{1 << (r % 8), 0}
				if err := p.AllreduceOr(or); err != nil {
					return err
				}
				want := byte(0)
				for q := range n {
					want |= 1 << (q % 8)
				}
				if or[0] != want || or[1] != 0 {
					return fmt.Errorf("AllreduceOr: got %v, want [%d 0]", or, want)
				}
				return nil
			})
			for r, err := range errs {
				if err != nil {
					t.Errorf("rank %d: %v", r, err)
				}
			}
		})
	}
}

// TestPointToPoint sends two messages with one tag from every rank to
// every other and checks that they arrive in order.
func TestPointToPoint(t *testing.T) {
	const n = 3
	errs := Run(n, 0, func(p *Proc) error {
		r := p.Rank()
		var recvs, sends []mpi.Msg
		in := make([][]byte, 0, 2*n)
		for q := range n {
			if q == r {
				continue
			}
			for k := range 2 {
				out := []byte{byte(r), byte(q), byte(k)}
				sends = append(sends, msg(out, q, 7))
				b := make([]byte, 3)
				in = append(in, b)
				recvs = append(recvs, msg(b, q, 7))
			}
		}
		if err := p.Start(recvs, sends); err != nil {
			return err
		}
		if err := p.Wait(); err != nil {
			return err
		}
		i := 0
		for q := range n {
			if q == r {
				continue
			}
			for k := range 2 {
				if want := []byte{byte(q), byte(r), byte(k)}; !bytes.Equal(in[i], want) {
					return fmt.Errorf("message %d from rank %d: got %v, want %v", k, q, in[i], want)
				}
				i++
			}
		}
		return nil
	})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", r, err)
		}
	}
}

// TestFailures checks that what would hang or corrupt a real job fails on
// simulated ranks, within the timeout.
func TestFailures(t *testing.T) {
	tests := []struct {
		name    string
		f       func(p *Proc) error
		want    []string // in rank 0's error
		timeout bool     // rank 0's error is an *mpi.TimeoutError
	}{
		{
			name: "collective-not-joined",
			f: func(p *Proc) error {
				if p.Rank() == 1 {
					return nil
				}
				return p.AllreduceOr(make([]byte, 4))
			},
			want:    []string{"ranks [1] never joined", "rank 0 waited", "MPI_Allreduce"},
			timeout: true,
		},
		{
			name: "different-collectives",
			f: func(p *Proc) error {
				if p.Rank() == 1 {
					return p.Allgather([]byte{1}, make([]byte, 2))
				}
				return p.AllreduceOr(make([]byte, 1))
			},
			want: []string{"rank 0 called MPI_Allreduce while rank 1 called MPI_Allgather"},
		},
		{
			name: "message-never-sent",
			f: func(p *Proc) error {
				b := make([]byte, 8)
				if err := p.Start([]mpi.Msg{msg(b, 1-p.Rank(), 3)}, nil); err != nil {
					return err
				}
				return p.Wait()
			},
			want:    []string{"rank 0 waited", "MPI_Waitall"},
			timeout: true,
		},
		{
			name: "truncated",
			f: func(p *Proc) error {
				if p.Rank() == 1 {
					return p.Start(nil, []mpi.Msg{msg(make([]byte, 16), 0, 3)})
				}
				if err := p.Start([]mpi.Msg{msg(make([]byte, 8), 1, 3)}, nil); err != nil {
					return err
				}
				return p.Wait()
			},
			want: []string{"a message of 16 bytes from rank 1 (tag 3) into a receive of 8 bytes"},
		},
		{
			name: "bad-rank",
			f: func(p *Proc) error {
				return p.Start(nil, []mpi.Msg{msg(make([]byte, 1), 5, 0)})
			},
			want: []string{"rank 5 outside [0,2)"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			errs := Run(2, 200*time.Millisecond, tc.f)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			err := errs[0]
			if err == nil {
				t.Fatalf("rank 0: no error, want one with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("rank 0's error %q does not say %q", err, w)
				}
			}
			var te *mpi.TimeoutError
			if got := errors.As(err, &te); got != tc.timeout {
				t.Errorf("rank 0's error is a timeout: %v, want %v", got, tc.timeout)
			}
			if tc.name == "message-never-sent" && (te == nil || len(te.Pending) != 1 || te.Pending[0] != 0) {
				t.Errorf("pending messages: %+v, want [0]", te)
			}
		})
	}
}

func TestRunRecoversPanics(t *testing.T) {
	errs := Run(2, 0, func(p *Proc) error {
		if p.Rank() == 1 {
			panic("boom")
		}
		return nil
	})
	if errs[0] != nil || errs[1] == nil || !strings.Contains(errs[1].Error(), "rank 1 panicked: boom") {
		t.Errorf("errors %v, want rank 1's panic", errs)
	}
}
