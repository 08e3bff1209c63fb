package dist

import (
	"encoding/binary"
	"fmt"
)

// GatherRows collects a distributed array on rank 0 in global order: every
// rank passes the global numbers of its owned elements and their values,
// elem bytes each, one after another; rank 0 gets every rank's rows in
// out (len: the global size × elem), the others pass nil. It is
// collective: one all-to-all in which each rank sends rank 0 its rows,
// each a little-endian uint32 global number followed by the values.
func GatherRows(c Comm, global []int32, vals []byte, elem int, out []byte) error {
	if len(vals) != len(global)*elem {
		return fmt.Errorf("GatherRows: %d bytes of values for %d elements of %d bytes", len(vals), len(global), elem)
	}
	msg := make([]byte, 0, len(global)*(4+elem))
	for i, g := range global {
		msg = binary.LittleEndian.AppendUint32(msg, uint32(g))
		msg = append(msg, vals[i*elem:(i+1)*elem]...)
	}
	send := make([][]byte, c.Size())
	send[0] = msg
	got, err := c.Alltoallv(send)
	if err != nil || c.Rank() != 0 {
		return err
	}
	for r, b := range got {
		for k := 0; k+4+elem <= len(b); k += 4 + elem {
			g := int(binary.LittleEndian.Uint32(b[k:]))
			if (g+1)*elem > len(out) {
				return fmt.Errorf("GatherRows: rank %d sent element %d of a set of %d", r, g, len(out)/max(elem, 1))
			}
			copy(out[g*elem:(g+1)*elem], b[k+4:k+4+elem])
		}
	}
	return nil
}

// ScatterRows is GatherRows's reverse: rank 0 holds the values of every
// element in global order (all, elem bytes each; nil on the other ranks),
// and every rank gets those of the elements global names, one after
// another. It is collective: each rank asks rank 0 for its elements
// (little-endian uint32 global numbers) in one all-to-all, and rank 0
// answers in a second.
func ScatterRows(c Comm, global []int32, all []byte, elem int) ([]byte, error) {
	ask := make([]byte, 0, 4*len(global))
	for _, g := range global {
		ask = binary.LittleEndian.AppendUint32(ask, uint32(g))
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
			out := make([]byte, 0, len(a)/4*elem)
			for k := 0; k+4 <= len(a); k += 4 {
				g := int(binary.LittleEndian.Uint32(a[k:]))
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
