// Package collective is what every rank of a job computes together, in
// pure Go over a Comm (an *mpi.World, or simulated ranks in tests): the
// agreement on a collective step (AgreeStep, with the sentinel errors it
// carries between the ranks: Share), gathers, all-to-alls of
// int32 messages, reductions, and the even split of a set over the ranks
// before partitioning (Block). It sits below internal/dist and the
// library bindings (internal/h5), which agree on their steps through it,
// and imports nothing of the module.
package collective

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// Comm is what the distributed algorithms here and in internal/dist need
// from MPI: the rank, the number of ranks and a personalised all-to-all
// exchange. Every rank calls the same operations in the same order. An
// *mpi.World is a Comm; tests use simulated ranks.
type Comm interface {
	Rank() int
	Size() int
	// Alltoallv sends send[q] to rank q and returns what each rank
	// sent this one, indexed by sender, in buffers that belong to the
	// caller (not the senders' and not reused by the Comm).
	Alltoallv(send [][]byte) ([][]byte, error)
}

// Reducer is a Comm with element-wise reductions of int64 values in one
// collective (MPI_Allreduce: what a rank sends and receives does not grow
// with the ranks); op is 0 for the sum, 1 the minimum, 2 the maximum (as
// internal/mpi's Sum, Min, Max). The algorithms use it when their Comm
// has it, else an all-to-all.
type Reducer interface {
	AllreduceInt64(buf []int64, op int) error
}

// Orer is a Comm with a bitwise OR of every rank's bytes in one
// collective (MPI_Allreduce with MPI_BOR). AgreeStep starts with one when
// its Comm has it.
type Orer interface {
	AllreduceOr(buf []byte) error
}

// The first message of every agreement (a loop's and a chain's in
// internal/dist, AgreeStep's) is one Orer.AllreduceOr of AgreeBytes
// bytes, starting with an identity of what the rank is at and its
// complement (AgreeIdentity bytes): whichever two of them meet, MPI
// pairs them as the same operation of the same size, and a bit on which
// the identities differ is set in the OR of one or of the other, so that
// every rank finds that the ranks differ and calls Disagree.
const (
	AgreeBytes    = 128
	AgreeIdentity = 16
)

// PutIdentity writes identity id and its complement at the start of
// head (AgreeIdentity bytes), the first message of an agreement.
func PutIdentity(head []byte, id uint64) {
	binary.LittleEndian.PutUint64(head, id)
	binary.LittleEndian.PutUint64(head[8:], ^id)
}

// Agreed reports whether head holds identity id and its complement
// (PutIdentity): of the ranks' first messages of an agreement ORed,
// whether every rank is at the same one.
func Agreed(head []byte, id uint64) bool {
	return binary.LittleEndian.Uint64(head) == id && binary.LittleEndian.Uint64(head[8:]) == ^id
}

// Disagree is collective among ranks that found (Agreed) that they are
// at different operations: each passes the one it is at (what), and gets
// an error naming every rank's, or MPI's error when the gathering of
// them failed.
func Disagree(c Comm, what string) error {
	got, err := Allgather(c, []byte(what))
	if err != nil {
		return fmt.Errorf("rank %d: %s: the ranks are at different collective operations; gathering where each is: %w", c.Rank(), what, err)
	}
	at := make([]string, len(got))
	for r, b := range got {
		at[r] = fmt.Sprintf("rank %d: %s", r, b)
	}
	return errDifferent(at)
}

// errDifferent is the error of ranks at different operations, at naming
// each rank's.
func errDifferent(at []string) error {
	return fmt.Errorf("the ranks are at different collective operations (every rank must call them in the same order):\n  %s", strings.Join(at, "\n  "))
}

// stepID is AgreeStep's identity of what (FNV-1a, after a prefix no
// loop's identity has).
func stepID(what string) uint64 {
	id := uint64(14695981039346656037)
	for _, s := range []string{"AgreeStep\x00", what} {
		for i := 0; i < len(s); i++ {
			id = (id ^ uint64(s[i])) * 1099511628211
		}
	}
	return id
}

// The operations of Reducer.AllreduceInt64.
const (
	OpSum = 0
	OpMin = 1
	OpMax = 2
)

// Single is the Comm of one process: rank 0 of 1, whose all-to-all
// returns a copy of what it sends itself.
type Single struct{}

// Rank returns 0.
func (Single) Rank() int { return 0 }

// Size returns 1.
func (Single) Size() int { return 1 }

// Alltoallv returns a copy of send[0].
func (Single) Alltoallv(send [][]byte) ([][]byte, error) {
	return [][]byte{append([]byte(nil), send[0]...)}, nil
}

// Allgather sends b to every rank and returns every rank's b.
func Allgather(c Comm, b []byte) ([][]byte, error) {
	send := make([][]byte, c.Size())
	for q := range send {
		send[q] = b
	}
	return c.Alltoallv(send)
}

// SumInt64 returns the element-wise sums of v over the ranks.
func SumInt64(c Comm, v []int64) ([]int64, error) {
	if r, ok := c.(Reducer); ok {
		out := append([]int64(nil), v...)
		return out, r.AllreduceInt64(out, OpSum)
	}
	got, err := Allgather(c, Int64Bytes(v))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(v))
	for _, b := range got {
		for i, x := range BytesInt64(b) {
			if i < len(out) {
				out[i] += x
			}
		}
	}
	return out, nil
}

// MinMax returns the element-wise minimum of lo and maximum of hi over
// the ranks.
func MinMax(c Comm, lo, hi []float64) ([]float64, []float64, error) {
	if r, ok := c.(Reducer); ok {
		// Floats as int64 in the same order: the sign bit set flips
		// the others.
		key := func(x float64) int64 {
			i := int64(math.Float64bits(x))
			if i < 0 {
				i ^= math.MaxInt64
			}
			return i
		}
		val := func(i int64) float64 {
			if i < 0 {
				i ^= math.MaxInt64
			}
			return math.Float64frombits(uint64(i))
		}
		kl, kh := make([]int64, len(lo)), make([]int64, len(hi))
		for i, x := range lo {
			kl[i] = key(x)
		}
		for i, x := range hi {
			kh[i] = key(x)
		}
		if err := r.AllreduceInt64(kl, OpMin); err != nil {
			return nil, nil, err
		}
		if err := r.AllreduceInt64(kh, OpMax); err != nil {
			return nil, nil, err
		}
		outLo, outHi := make([]float64, len(lo)), make([]float64, len(hi))
		for i, k := range kl {
			outLo[i] = val(k)
		}
		for i, k := range kh {
			outHi[i] = val(k)
		}
		return outLo, outHi, nil
	}
	b := make([]byte, 0, 8*(len(lo)+len(hi)))
	for _, x := range append(append([]float64(nil), lo...), hi...) {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	got, err := Allgather(c, b)
	if err != nil {
		return nil, nil, err
	}
	outLo, outHi := make([]float64, len(lo)), make([]float64, len(hi))
	for i := range outLo {
		outLo[i] = math.Inf(1)
	}
	for i := range outHi {
		outHi[i] = math.Inf(-1)
	}
	for _, g := range got {
		for i := range outLo {
			outLo[i] = min(outLo[i], math.Float64frombits(binary.LittleEndian.Uint64(g[8*i:])))
		}
		for i := range outHi {
			outHi[i] = max(outHi[i], math.Float64frombits(binary.LittleEndian.Uint64(g[8*(len(lo)+i):])))
		}
	}
	return outLo, outHi, nil
}

// AlltoallInt32 is Alltoallv for int32 messages: send[q] goes to rank q,
// and it returns what each rank sent this one, indexed by sender. The
// received messages are viewed in place where they are aligned (the
// Comm's buffers are the caller's), so that they are not held twice.
func AlltoallInt32(c Comm, send [][]int32) ([][]int32, error) {
	return alltoall(c, send, Int32Bytes, BytesInt32)
}

// AlltoallInt64 is AlltoallInt32 for int64 messages.
func AlltoallInt64(c Comm, send [][]int64) ([][]int64, error) {
	return alltoall(c, send, Int64Bytes, BytesInt64)
}

// alltoall is AlltoallInt32 and AlltoallInt64: toBytes views a message as
// bytes, fromBytes copies a misaligned one back.
func alltoall[T int32 | int64](c Comm, send [][]T, toBytes func([]T) []byte, fromBytes func([]byte) []T) ([][]T, error) {
	out := make([][]byte, len(send))
	for q := range send {
		out[q] = toBytes(send[q])
	}
	got, err := c.Alltoallv(out)
	if err != nil {
		return nil, err
	}
	size := int(unsafe.Sizeof(T(0)))
	in := make([][]T, len(got))
	for q, b := range got {
		if len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%uintptr(size) == 0 && len(b)%size == 0 {
			in[q] = unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/size)
		} else {
			in[q] = fromBytes(b)
		}
	}
	return in, nil
}

// Int32Bytes views v as bytes (the machine's byte order; every rank of a
// job runs on the same kind of machine).
func Int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// BytesInt32 copies b into a new []int32.
func BytesInt32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	copy(Int32Bytes(v), b)
	return v
}

// Int64Bytes views v as bytes, as Int32Bytes does.
func Int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}

// BytesInt64 copies b into a new []int64.
func BytesInt64(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	if len(v) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v)), b)
	}
	return v
}

// AgreeStep is collective: every rank passes the collective operation it
// is at (what) and its own error (nil when it has none), and gets back an
// error naming every rank that failed and why, or that the ranks are at
// different operations (a program whose ranks took different paths), or
// nil. The message has no "op2: " prefix, for the caller to wrap. A
// collective operation whose ranks can fail on their own (a device copy,
// a file) calls it before the step in which the ranks meet, so that no rank
// waits for one that has given up or gone elsewhere. With one rank it
// returns err. When the exchange itself fails the error wraps MPI's (which
// may be a timeout: see dist.TimedOut). The error matches (errors.Is) the
// sentinels (see Share) the failed ranks' errors match, on every rank
// alike, and nothing else (not this rank's own error, which the others
// do not have: a program branching on it would take different paths on
// different ranks). With an Orer Comm its first message is an
// agreement's (AgreeBytes), so that a rank at it and one at a loop find
// that they differ instead of meeting in MPI calls of different kinds.
func AgreeStep(c Comm, what string, err error) error {
	if c.Size() == 1 {
		return err
	}
	if o, ok := c.(Orer); ok {
		// One MPI_Allreduce when every rank is at what and none failed;
		// the messages of the failures follow only when some rank did.
		var head [AgreeBytes]byte
		id := stepID(what)
		PutIdentity(head[:], id)
		if err != nil {
			head[AgreeIdentity] = 1
		}
		if aerr := o.AllreduceOr(head[:]); aerr != nil {
			return fmt.Errorf("rank %d: %s: agreeing with the other ranks: %w", c.Rank(), what, aerr)
		}
		if !Agreed(head[:], id) {
			return Disagree(c, what)
		}
		if head[AgreeIdentity] == 0 {
			return nil
		}
	}
	mine := []byte(what + "\x00")
	if err != nil {
		mine = append(mine, strings.Join(sharedBy(err), ",")...)
		mine = append(mine, 0)
		mine = append(mine, strings.TrimPrefix(err.Error(), "op2: ")...)
	}
	got, aerr := Allgather(c, mine)
	if aerr != nil {
		return fmt.Errorf("rank %d: %s: agreeing with the other ranks: %w", c.Rank(), what, aerr)
	}
	var at, failed []string
	var matches []error // the sentinels the failures match
	same := true
	for r, b := range got {
		op, rest, _ := strings.Cut(string(b), "\x00")
		names, msg, _ := strings.Cut(rest, "\x00")
		same = same && op == what
		at = append(at, fmt.Sprintf("rank %d: %s", r, op))
		if msg != "" {
			failed = append(failed, fmt.Sprintf("rank %d: %s", r, msg))
			matches = append(matches, sentinelsNamed(names)...)
		}
	}
	switch {
	case !same:
		return errDifferent(at)
	case len(failed) == 1:
		return &agreed{failed[0], matches}
	case len(failed) > 1:
		return &agreed{fmt.Sprintf("%d ranks failed:\n  %s", len(failed), strings.Join(failed, "\n  ")), matches}
	}
	return nil
}

// agreed is AgreeStep's error when ranks failed: its message, and the
// sentinels of the failed ranks' errors, which it matches.
type agreed struct {
	msg     string
	matches []error
}

func (e *agreed) Error() string   { return e.msg }
func (e *agreed) Unwrap() []error { return e.matches }

// shared are the sentinel errors AgreeStep carries between the ranks, by
// name.
var shared struct {
	sync.Mutex
	byName map[string]error
}

// Share makes AgreeStep's error match (errors.Is) sentinel, an error a
// failure on some ranks only may match (a library missing there), on
// every rank when a failed rank's error matches it, so that a program can
// test for it on every rank (errors.Is(err, op2.ErrPETScUnavailable)).
// name identifies it between the ranks: a constant, the same on every
// rank.
func Share(name string, sentinel error) {
	shared.Lock()
	defer shared.Unlock()
	if shared.byName == nil {
		shared.byName = map[string]error{}
	}
	shared.byName[name] = sentinel
}

// sharedBy returns the names of the shared sentinels err matches, in
// order.
func sharedBy(err error) []string {
	shared.Lock()
	defer shared.Unlock()
	var names []string
	for name, s := range shared.byName {
		if errors.Is(err, s) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// sentinelsNamed returns the shared sentinels of names (comma-separated).
func sentinelsNamed(names string) []error {
	if names == "" {
		return nil
	}
	shared.Lock()
	defer shared.Unlock()
	var out []error
	for _, name := range strings.Split(names, ",") {
		if s, ok := shared.byName[name]; ok {
			out = append(out, s)
		}
	}
	return out
}

// Block returns the block of a set of n elements that rank (of ranks)
// holds before partitioning: OP2's split (compute_local_size), where each
// rank gets n/ranks consecutive elements and the first n mod ranks ranks
// one more. ranks below 1 count as 1. (mesh.Block is it.)
func Block(n, rank, ranks int) (start, count int) {
	if ranks < 1 {
		ranks = 1
	}
	q, r := n/ranks, n%ranks
	count = q
	if rank < r {
		count++
	}
	return rank*q + min(rank, r), count
}

// BlockHome returns the rank whose Block of a set of n elements (over
// ranks) holds element g, 0 <= g < n.
func BlockHome(n, ranks, g int) int {
	if ranks < 1 {
		ranks = 1
	}
	q, r := n/ranks, n%ranks
	if g < r*(q+1) {
		return g / (q + 1)
	}
	return r + (g-r*(q+1))/q
}
