package dist

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/goop2/op2/internal/collective"
)

// GatherRows collects a distributed array on rank 0 in global order: every
// rank passes the global numbers of its owned elements (numbered from
// base: SetHalo.Base) and their values, elem bytes each, one after
// another; rank 0 gets every rank's rows in out (len: the global size ×
// elem), the others pass nil. It is collective: one all-to-all in which
// each rank sends rank 0 its rows, each a little-endian uint64 row number
// followed by the values.
func GatherRows(c Comm, global []int64, base int64, vals []byte, elem int, out []byte) error {
	if len(vals) != len(global)*elem {
		return fmt.Errorf("GatherRows: %d bytes of values for %d elements of %d bytes", len(vals), len(global), elem)
	}
	msg := make([]byte, 0, len(global)*(8+elem))
	for i, g := range global {
		msg = binary.LittleEndian.AppendUint64(msg, uint64(g-base))
		msg = append(msg, vals[i*elem:(i+1)*elem]...)
	}
	send := make([][]byte, c.Size())
	send[0] = msg
	got, err := c.Alltoallv(send)
	if err != nil || c.Rank() != 0 {
		return err
	}
	for r, b := range got {
		for k := 0; k+8+elem <= len(b); k += 8 + elem {
			g := int(binary.LittleEndian.Uint64(b[k:]))
			if g < 0 || (g+1)*elem > len(out) {
				return fmt.Errorf("GatherRows: rank %d sent element %d of a set of %d", r, g, len(out)/max(elem, 1))
			}
			copy(out[g*elem:(g+1)*elem], b[k+8:k+8+elem])
		}
	}
	return nil
}

// ScatterRows is GatherRows's reverse: rank 0 holds the values of every
// element in global order (all, elem bytes each; nil on the other ranks),
// and every rank gets those of the elements global names (numbered from
// base), one after another. It is collective: each rank asks rank 0 for
// its elements (little-endian uint64 row numbers) in one all-to-all, and
// rank 0 answers in a second.
func ScatterRows(c Comm, global []int64, base int64, all []byte, elem int) ([]byte, error) {
	ask := make([]byte, 0, 8*len(global))
	for _, g := range global {
		ask = binary.LittleEndian.AppendUint64(ask, uint64(g-base))
	}
	send := make([][]byte, c.Size())
	send[0] = ask
	asked, err := c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	send = make([][]byte, c.Size())
	if c.Rank() == 0 {
		for r, a := range asked {
			out := make([]byte, 0, len(a)/8*elem)
			for k := 0; k+8 <= len(a); k += 8 {
				g := int(binary.LittleEndian.Uint64(a[k:]))
				if g < 0 || (g+1)*elem > len(all) {
					return nil, fmt.Errorf("ScatterRows: rank %d asked for element %d of a set of %d", r, g, len(all)/max(elem, 1))
				}
				out = append(out, all[g*elem:(g+1)*elem]...)
			}
			send[r] = out
		}
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return nil, err
	}
	return got[0], nil
}

// ToBlocks moves a distributed array into even blocks of its global
// numbering (collective.Block of total elements): every rank passes the global
// numbers of its owned elements and their values, elem bytes each, one
// after another, and gets the values of its block's elements in global
// order, with the block's first element (numbered from 0: the global
// numbers less base, SetHalo.Base). It is collective: one all-to-all in
// which each row goes to the rank whose block holds it, as a little-endian
// row number (4 bytes, or 8 for a set of 2³² elements or more) followed
// by the values, so a rank holds its rows, its block and the messages
// between them, never the whole array (as GatherRows's rank 0 does).
// Every element of the block must arrive exactly once.
func ToBlocks(c Comm, global []int64, base int64, vals []byte, elem, total int) (start int, block []byte, err error) {
	if len(vals) != len(global)*elem {
		return 0, nil, fmt.Errorf("ToBlocks: %d bytes of values for %d elements of %d bytes", len(vals), len(global), elem)
	}
	size := c.Size()
	bl := evenBlocks(total, size)
	st := bl.start
	w := rowWidth(total)
	lens := make([]int, size)
	for _, g := range global {
		if g -= base; g < 0 || g >= int64(total) {
			return 0, nil, fmt.Errorf("ToBlocks: element %d outside a set of %d", g, total)
		}
		lens[bl.home(g)] += w + elem
	}
	// One buffer, sliced per rank, which Alltoallv sends without copying:
	// each slice is appended exactly its rank's bytes, within its part.
	flat := make([]byte, len(global)*(w+elem))
	send := make([][]byte, size)
	off := 0
	for q := range send {
		send[q] = flat[off:off]
		off += lens[q]
	}
	for i, g := range global {
		g -= base
		q := bl.home(g)
		send[q] = appendRow(send[q], w, g)
		send[q] = append(send[q], vals[i*elem:(i+1)*elem]...)
	}
	got, err := c.Alltoallv(send)
	if err != nil {
		return 0, nil, err
	}
	clear(send)
	flat = nil
	me := c.Rank()
	start, count := st[me], st[me+1]-st[me]
	block = make([]byte, count*elem)
	n := 0
	for r, b := range got {
		if len(b)%(w+elem) != 0 {
			return 0, nil, fmt.Errorf("ToBlocks: rank %d sent %d bytes, not rows of %d", r, len(b), w+elem)
		}
		for k := 0; k < len(b); k += w + elem {
			g := int(readRow(b[k:], w))
			if g < start || g >= start+count {
				return 0, nil, fmt.Errorf("ToBlocks: rank %d sent element %d, outside block [%d,%d)", r, g, start, start+count)
			}
			copy(block[(g-start)*elem:], b[k+w:k+w+elem])
			n++
		}
		got[r] = nil
	}
	if n != count {
		return 0, nil, fmt.Errorf("ToBlocks: block [%d,%d) received %d rows", start, start+count, n)
	}
	return start, block, nil
}

// FromBlocks is ToBlocks's reverse: every rank holds the rows of its even
// block of an array of total elements (collective.Block), elem bytes each, in
// block, and gets those of the global elements need names (numbered from
// base: SetHalo.Base), one after another. It is collective: each rank
// asks the rank whose block holds each element (little-endian row
// numbers, 4 bytes or 8 as ToBlocks sends them) in one all-to-all, and
// gets the rows back in a second.
func FromBlocks(c Comm, need []int64, base int64, block []byte, elem, total int) ([]byte, error) {
	size := c.Size()
	bl := evenBlocks(total, size)
	st := bl.start
	me := c.Rank()
	if len(block) != (st[me+1]-st[me])*elem {
		return nil, fmt.Errorf("FromBlocks: %d bytes for block [%d,%d) of %d-byte rows", len(block), st[me], st[me+1], elem)
	}
	w := rowWidth(total)
	ask := make([][]byte, size)
	for _, g := range need {
		if g -= base; g < 0 || g >= int64(total) {
			return nil, fmt.Errorf("FromBlocks: element %d outside a set of %d", g, total)
		}
		q := bl.home(g)
		ask[q] = appendRow(ask[q], w, g)
	}
	asked, err := c.Alltoallv(ask)
	if err != nil {
		return nil, err
	}
	reply := make([][]byte, size)
	for r, a := range asked {
		out := make([]byte, 0, len(a)/w*elem)
		for k := 0; k+w <= len(a); k += w {
			g := int(readRow(a[k:], w)) - st[me]
			if g < 0 || g >= st[me+1]-st[me] {
				return nil, fmt.Errorf("FromBlocks: rank %d asked for element %d, outside block [%d,%d)", r, g+st[me], st[me], st[me+1])
			}
			out = append(out, block[g*elem:(g+1)*elem]...)
		}
		reply[r] = out
	}
	got, err := c.Alltoallv(reply)
	if err != nil {
		return nil, err
	}
	// The rows come back grouped by home rank, each group in need's order.
	out := make([]byte, len(need)*elem)
	next := make([]int, size)
	for i, g := range need {
		q := bl.home(g - base)
		copy(out[i*elem:(i+1)*elem], got[q][next[q]:next[q]+elem])
		next[q] += elem
	}
	return out, nil
}

// evenBlocks is the even split of total elements over size ranks
// (collective.Block): rank r holds [start[r], start[r+1]).
func evenBlocks(total, size int) blocks {
	st := make([]int, size+1)
	for r := range size {
		st[r+1], _ = collective.Block(total, r+1, size)
	}
	st[size] = total
	return blocks{start: st}
}

// rowWidth is the bytes ToBlocks and FromBlocks give a row number of a
// set of total elements: 4, or 8 from 2³² elements.
func rowWidth(total int) int {
	if total > math.MaxUint32 {
		return 8
	}
	return 4
}

// appendRow appends row number g in w bytes (rowWidth).
func appendRow(b []byte, w int, g int64) []byte {
	if w == 4 {
		return binary.LittleEndian.AppendUint32(b, uint32(g))
	}
	return binary.LittleEndian.AppendUint64(b, uint64(g))
}

// readRow reads a row number of w bytes (rowWidth).
func readRow(b []byte, w int) int64 {
	if w == 4 {
		return int64(binary.LittleEndian.Uint32(b))
	}
	return int64(binary.LittleEndian.Uint64(b))
}
