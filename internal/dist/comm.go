package dist

import (
	"encoding/binary"
	"math"
	"unsafe"
)

// Comm is what the distributed algorithms of this package need from MPI:
// the rank, the number of ranks and a personalised all-to-all exchange.
// Every rank calls the same operations in the same order. An *mpi.World
// is a Comm; tests use simulated ranks.
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

const (
	opSum = 0
	opMin = 1
	opMax = 2
)

// allgather sends b to every rank and returns every rank's b.
func allgather(c Comm, b []byte) ([][]byte, error) {
	send := make([][]byte, c.Size())
	for q := range send {
		send[q] = b
	}
	return c.Alltoallv(send)
}

// sumInt64 returns the element-wise sums of v over the ranks.
func sumInt64(c Comm, v []int64) ([]int64, error) {
	if r, ok := c.(Reducer); ok {
		out := append([]int64(nil), v...)
		return out, r.AllreduceInt64(out, opSum)
	}
	got, err := allgather(c, int64Bytes(v))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(v))
	for _, b := range got {
		for i, x := range bytesInt64(b) {
			if i < len(out) {
				out[i] += x
			}
		}
	}
	return out, nil
}

// minMax returns the element-wise minimum of lo and maximum of hi over
// the ranks.
func minMax(c Comm, lo, hi []float64) ([]float64, []float64, error) {
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
		if err := r.AllreduceInt64(kl, opMin); err != nil {
			return nil, nil, err
		}
		if err := r.AllreduceInt64(kh, opMax); err != nil {
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
	got, err := allgather(c, b)
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

// alltoallInt32 is Alltoallv for int32 messages: send[q] goes to rank q,
// and it returns what each rank sent this one, indexed by sender. The
// received messages are viewed in place where they are aligned (the
// Comm's buffers are the caller's), so that they are not held twice.
func alltoallInt32(c Comm, send [][]int32) ([][]int32, error) {
	out := make([][]byte, len(send))
	for q := range send {
		out[q] = int32Bytes(send[q])
	}
	got, err := c.Alltoallv(out)
	if err != nil {
		return nil, err
	}
	in := make([][]int32, len(got))
	for q, b := range got {
		if len(b) > 0 && uintptr(unsafe.Pointer(unsafe.SliceData(b)))%4 == 0 && len(b)%4 == 0 {
			in[q] = unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
		} else {
			in[q] = bytesInt32(b)
		}
	}
	return in, nil
}

// pairMessages builds the messages of an all-to-all of int32 pairs in
// one buffer, sized first: each calls emit(q, a, b) for every pair
// (a, b) for rank q, the same pairs in the same order each time it is
// called (twice: counting, then filling). One buffer, slices of which
// the messages are, is sent without a copy and without the doubling of
// growing slices.
func pairMessages(ranks int, each func(emit func(q int, a, b int32))) [][]int32 {
	count := make([]int, ranks+1)
	each(func(q int, _, _ int32) { count[q+1] += 2 })
	for q := 0; q < ranks; q++ {
		count[q+1] += count[q]
	}
	buf := make([]int32, count[ranks])
	pos := append([]int(nil), count[:ranks]...)
	each(func(q int, a, b int32) {
		buf[pos[q]], buf[pos[q]+1] = a, b
		pos[q] += 2
	})
	send := make([][]int32, ranks)
	for q := range send {
		// Two-index slices: each message's capacity runs on into the
		// next, which is how the MPI layer sees that they are one.
		send[q] = buf[count[q]:count[q+1]]
	}
	return send
}

// groupPairs groups the pairs (key, value) that the ranks sent (got, as
// from alltoallInt32 of pairMessages) by key, a global number in
// [first, first+n): a counting sort, linear and without comparisons.
// The values of key first+k are vals[start[k]:start[k+1]], in the order
// received (by sender, then as sent).
func groupPairs(got [][]int32, first int32, n int) (start []int64, vals []int32) {
	start = make([]int64, n+1)
	for _, v := range got {
		for k := 0; k+1 < len(v); k += 2 {
			start[v[k]-first+1]++
		}
	}
	for k := 0; k < n; k++ {
		start[k+1] += start[k]
	}
	vals = make([]int32, start[n])
	// Fill at start[k], advancing it to where k+1 starts; then shift
	// back.
	for _, v := range got {
		for k := 0; k+1 < len(v); k += 2 {
			i := v[k] - first
			vals[start[i]] = v[k+1]
			start[i]++
		}
	}
	copy(start[1:], start[:n])
	start[0] = 0
	return start, vals
}

// int32Bytes views v as bytes (the machine's byte order; every rank of a
// job runs on the same kind of machine).
func int32Bytes(v []int32) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 4*len(v))
}

// bytesInt32 copies b into a new []int32.
func bytesInt32(b []byte) []int32 {
	v := make([]int32, len(b)/4)
	copy(int32Bytes(v), b)
	return v
}

func int64Bytes(v []int64) []byte {
	if len(v) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v))
}

func bytesInt64(b []byte) []int64 {
	v := make([]int64, len(b)/8)
	if len(v) > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(v))), 8*len(v)), b)
	}
	return v
}

// blocks describes how a set's elements are spread over the ranks before
// partitioning: rank r holds the global elements [Start[r], Start[r+1]).
type blocks struct {
	start []int // len ranks+1
}

// home returns the rank holding global element g.
func (b blocks) home(g int32) int {
	// The last r with start[r] <= g; empty blocks share a start.
	lo, hi := 0, len(b.start)-1
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if b.start[mid] <= int(g) {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}

func (b blocks) total() int { return b.start[len(b.start)-1] }
