package engine

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/goop2/op2/internal/core"
)

// Check mode also finds kernels that leave values of a floating-point
// WRITE argument unwritten: a kernel must write every value of one (as in
// OP2), and what it leaves is otherwise undefined (the host backends keep
// the old values, the devices write back what their private copies held).
// Before the loop every value it is to write (the elements it runs over,
// or the targets its map reaches) is set to a signalling NaN no
// computation makes; a value still holding it afterwards was not written,
// and gets back its value from before the loop.

// The patterns of an unwritten value: signalling NaNs, which arithmetic
// turns quiet, so a kernel cannot compute them.
const (
	unwritten64 uint64 = 0x7ff4_0b2c_0de5_e71e
	unwritten32 uint32 = 0x7fa0_b2c5
)

// writeProbe is one WRITE argument's data marked before a loop: its
// values before and the values the loop is to write.
type writeProbe struct {
	arg    int
	st     *core.Storage
	before []byte
	values []int
}

// markWrites marks the values each floating-point Dat that loop l only
// writes (every argument passing it is a WRITE) is to write with the
// unwritten pattern, on the host copy, which becomes the current one
// (core.Storage.HostAccess).
// Loops over extruded sets are left out.
func markWrites(l *core.Loop) ([]writeProbe, error) {
	if l.Extruded != nil {
		return nil, nil
	}
	var probes []writeProbe
	for i := range l.Args {
		a := &l.Args[i]
		st := a.Data
		if a.Access != core.Write || a.Off || !st.Type.IsFloat() || st.IsGlobal() || a.Kind == core.ArgMat ||
			slices.ContainsFunc(probes, func(p writeProbe) bool { return p.st == st }) ||
			slices.ContainsFunc(l.Args, func(b core.Arg) bool { return b.Data == st && (b.Access != core.Write || b.Off) }) {
			continue
		}
		p := writeProbe{arg: i, st: st, values: writtenValues(l, st)}
		if len(p.values) == 0 {
			continue
		}
		if err := st.HostAccess(true); err != nil {
			return probes, err
		}
		h := hostBytes(st)
		p.before = slices.Clone(h)
		for _, v := range p.values {
			setUnwritten(st.Type, h, v)
		}
		probes = append(probes, p)
	}
	return probes, nil
}

// writtenValues lists the values (element × dim + component) of st that
// loop l's WRITE arguments passing it are to write, each once.
func writtenValues(l *core.Loop, st *core.Storage) []int {
	seen := make([]bool, st.Bytes()/st.Type.Size())
	var values []int
	add := func(row int, a *core.Arg) {
		for k := range st.Dim {
			if v := row*st.Dim + k; (!a.View || k == a.Comp) && v < len(seen) && !seen[v] {
				seen[v] = true
				values = append(values, v)
			}
		}
	}
	end := l.IterEnd()
	for j := range l.Args {
		a := &l.Args[j]
		if a.Data != st {
			continue
		}
		for e := range end {
			switch a.Kind {
			case core.ArgDirect:
				add(e, a)
			case core.ArgIndirect:
				add(int(a.Map.Table[e*a.Map.Arity+a.Idx]), a)
			case core.ArgVector:
				for _, row := range a.Map.Table[e*a.Map.Arity : (e+1)*a.Map.Arity] {
					add(int(row), a)
				}
			}
		}
	}
	return values
}

func setUnwritten(t core.ScalarType, b []byte, v int) {
	if t == core.Float64 {
		binary.LittleEndian.PutUint64(b[v*8:], unwritten64)
	} else {
		binary.LittleEndian.PutUint32(b[v*4:], unwritten32)
	}
}

func isUnwritten(t core.ScalarType, b []byte, v int) bool {
	if t == core.Float64 {
		return binary.LittleEndian.Uint64(b[v*8:]) == unwritten64
	}
	return binary.LittleEndian.Uint32(b[v*4:]) == unwritten32
}

// verify finds the values the loop left unwritten, gives them back their
// values from before the loop, and describes them ("" when the loop wrote
// them all).
func (p *writeProbe) verify() (string, error) {
	st := p.st
	if err := st.HostAccess(false); err != nil {
		return "", err
	}
	h := hostBytes(st)
	size := st.Type.Size()
	first, count := -1, 0
	for _, v := range p.values {
		if !isUnwritten(st.Type, h, v) {
			continue
		}
		if first < 0 {
			first = v
		}
		count++
		copy(h[v*size:(v+1)*size], p.before[v*size:])
	}
	if count == 0 {
		return "", nil
	}
	if err := st.HostAccess(true); err != nil { // the device copy is stale
		return "", err
	}
	return fmt.Sprintf("the kernel did not write element %d, component %d of WRITE %s (%d values in all): a kernel must write every value of a WRITE argument, or take it RW; those values are back to what they were before the loop",
		first/st.Dim, first%st.Dim, st.Describe(), count), nil
}
