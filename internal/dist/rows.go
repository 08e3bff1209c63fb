package dist

import (
	"fmt"
	"slices"

	"github.com/goop2/op2/internal/collective"
)

// BlockRows returns the rows of a table spread over the ranks in blocks
// of the declared numbering (as before Partition: rank r holds the rows
// of its block of the set, k int32 values each, in rows) for the global
// elements named in need, k values per entry of need, in need's order.
// It is collective: every rank calls it, with its own block and its own
// need. One all-to-all shares the block sizes; each rank then asks the
// rank holding each distinct element it needs once (a second) and gets
// the rows back (a third). An entry of need outside the set is an error
// on every rank, named by what (a map's name and set, for messages),
// before any row moves.
func BlockRows(c Comm, rows []int32, k int, need []int32, what string) ([]int32, error) {
	if k < 1 || len(rows)%k != 0 {
		return nil, fmt.Errorf("%s: %d values in rows of %d", what, len(rows), k)
	}
	got, err := collective.Allgather(c, collective.Int64Bytes([]int64{int64(len(rows) / k)}))
	if err != nil {
		return nil, err
	}
	st := make([]int, c.Size()+1)
	for r, b := range got {
		st[r+1] = st[r] + int(collective.BytesInt64(b)[0])
	}
	bl := blocks{start: st}
	var bad error
	for i, g := range need {
		if g < 0 || int(g) >= bl.total() {
			bad = fmt.Errorf("%s: entry %d is %d, outside the set [0,%d)", what, i, g, bl.total())
			break
		}
	}
	if err := AgreeStep(c, what, bad); err != nil {
		return nil, err
	}
	// The distinct elements, sorted: each asked for once, from its home.
	uniq := slices.Clone(need)
	slices.Sort(uniq)
	uniq = slices.Compact(uniq)
	ask := make([][]int32, c.Size())
	for i := 0; i < len(uniq); {
		q := bl.home(int64(uniq[i]))
		j := i
		for j < len(uniq) && int(uniq[j]) < st[q+1] {
			j++
		}
		ask[q] = uniq[i:j]
		i = j
	}
	asked, err := collective.AlltoallInt32(c, ask)
	if err != nil {
		return nil, err
	}
	// Every element asked for is in this rank's block: the asker found
	// its home from the same block sizes.
	first := st[c.Rank()]
	answer := make([][]int32, c.Size())
	for q, req := range asked {
		out := make([]int32, 0, len(req)*k)
		for _, g := range req {
			l := int(g) - first
			out = append(out, rows[l*k:(l+1)*k]...)
		}
		answer[q] = out
	}
	back, err := collective.AlltoallInt32(c, answer)
	if err != nil {
		return nil, err
	}
	// The answers come by rank, in the order asked: uniq's order.
	fetched := make([]int32, 0, len(uniq)*k)
	for _, b := range back {
		fetched = append(fetched, b...)
	}
	if len(fetched) != len(uniq)*k {
		return nil, fmt.Errorf("%s: %d values came back for %d elements of %d", what, len(fetched), len(uniq), k)
	}
	out := make([]int32, len(need)*k)
	for i, g := range need {
		u, _ := slices.BinarySearch(uniq, g)
		copy(out[i*k:(i+1)*k], fetched[u*k:(u+1)*k])
	}
	return out, nil
}
