package dist

import "github.com/goop2/op2/internal/collective"

// Comm is what the distributed algorithms of this package need from MPI
// (collective.Comm): the rank, the number of ranks and a personalised
// all-to-all exchange. An *mpi.World is a Comm; tests use simulated ranks.
type Comm = collective.Comm

// Reducer is a Comm with element-wise reductions of int64 values in one
// collective (collective.Reducer); the algorithms use it when their Comm
// has it, else an all-to-all.
type Reducer = collective.Reducer

// AgreeStep is collective.AgreeStep: every rank passes the collective
// operation it is at (what) and its own error, and gets back an error
// naming every rank that failed and why, or that the ranks are at
// different operations, or nil. When the exchange itself fails the error
// wraps MPI's (which may be a timeout: see TimedOut).
func AgreeStep(c Comm, what string, err error) error { return collective.AgreeStep(c, what, err) }

// Allgather is collective.Allgather: every rank's b, on every rank.
func Allgather(c Comm, b []byte) ([][]byte, error) { return collective.Allgather(c, b) }

// Share is collective.Share: AgreeStep's error matches sentinel on every
// rank when a failed rank's error matches it; name identifies it between
// the ranks.
func Share(name string, sentinel error) { collective.Share(name, sentinel) }

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

// blocks describes how a set's elements are spread over the ranks before
// partitioning: rank r holds the global elements [Start[r], Start[r+1]);
// start[0] is the first global number (BlockMesh.Base), 0 but in tests.
type blocks struct {
	start []int // len ranks+1
}

// home returns the rank holding global element g.
func (b blocks) home(g int64) int {
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

// total is the number of elements over all ranks.
func (b blocks) total() int { return b.start[len(b.start)-1] - b.start[0] }

// end is the global number after the last element.
func (b blocks) end() int64 { return int64(b.start[len(b.start)-1]) }
