package engine

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/exec"
)

// Check mode (Config.Check, OP2_CHECK=1) guards READ arguments (and
// WRITE ones, checkwrite.go): their values
// are copied before a loop and compared afterwards with every current copy,
// host and device, so a kernel that writes through a READ pointer is found
// on every backend instead of leaving the copies silently different. On the
// host backends it also finds kernels that write to a Const (casting its
// const away): each call starts from the declared values, so such a write
// never reaches later loops, but it is reported.

// readSnapshot is the values of one READ argument's data before a loop.
type readSnapshot struct {
	arg    int
	st     *core.Storage
	before []byte
	// comps, when not nil, are the components compared (and restored):
	// the loop reads them through views (DatView) while other
	// arguments modify the data's other components.
	comps []int
}

// runChecked runs l in check mode.
func (r *Runtime) runChecked(b *exec.Opened, l *core.Loop, p exec.Program) error {
	r.Proc.checkFound = false // set at the end, for a finding (letThrough)
	// On several ranks the loop's halo exchanges complete before the
	// copy, which then holds the halo values the kernel reads: those
	// arriving while the loop runs were no write of the kernel's, and
	// restoring the copy would have undone them. The executor's Begin
	// then finds nothing left to exchange. Begin needs the signature,
	// which finding the program (p nil) sets, as here.
	if h := r.X.Halo; h != nil {
		if p == nil {
			l.Sig = core.Analyse(l)
		}
		if err := h.Begin(l, b.Device); err != nil {
			return r.Proc.api.Internal(err)
		}
		if err := h.Wait(l); err != nil {
			return r.Proc.api.Internal(err)
		}
	}
	snaps, err := snapshotReads(l)
	if err != nil {
		return r.Proc.api.Loop(l.Kernel.Name, l.Set.Name, -1, "check mode: "+err.Error())
	}
	probes, err := markWrites(l)
	// unmark gives every value still marked back its value from before
	// the loop, for a loop that did not run.
	unmark := func() {
		for i := range probes {
			_, _ = probes[i].verify() // the loop's own error is the one to report
		}
	}
	if err != nil {
		unmark()
		return r.Proc.api.Loop(l.Kernel.Name, l.Set.Name, -1, "check mode: "+err.Error())
	}
	var first error
	if err := r.X.RunProgram(b, l, p); err != nil {
		var cw *core.ConstWrittenError
		if !errors.As(err, &cw) {
			unmark()
			return r.Proc.api.Internal(err)
		}
		// The loop ran; its READ arguments are still verified below.
		c := cw.Const
		first = r.Proc.api.Loop(l.Kernel.Name, l.Set.Name, -1, fmt.Sprintf(
			"check mode: the kernel wrote to const %q (%s, dim %d): value %d changed from %s to %s; every loop sees the declared value, which is unchanged",
			c.Name, c.Type, c.Dim, cw.Value, formatValue(c.Type, cw.Was), formatValue(c.Type, cw.Now)))
	}
	for _, sn := range snaps {
		msg, err := sn.verify()
		if err == nil && msg == "" {
			continue
		}
		if err != nil {
			msg = err.Error()
		}
		if first == nil {
			first = r.Proc.api.Loop(l.Kernel.Name, l.Set.Name, sn.arg, "check mode: "+msg)
		}
	}
	for i := range probes {
		msg, err := probes[i].verify()
		if err != nil {
			msg = err.Error()
		}
		if msg != "" && first == nil {
			first = r.Proc.api.Loop(l.Kernel.Name, l.Set.Name, probes[i].arg, "check mode: "+msg)
		}
	}
	// The loop ran to its end: on several ranks its exchanges and
	// reductions met the other ranks', which may have found nothing
	// (runQueue).
	r.Proc.checkFound = first != nil
	return first
}

// snapshotReads copies the current values of every distinct data that the
// loop only reads.
func snapshotReads(l *core.Loop) ([]readSnapshot, error) {
	var snaps []readSnapshot
next:
	for i := range l.Args {
		a := &l.Args[i]
		if a.Access != core.Read || a.Data.Len == 0 {
			continue
		}
		for _, sn := range snaps {
			if sn.st == a.Data {
				continue next
			}
		}
		comps, ok := readComponents(l, a.Data)
		if !ok {
			continue next // a Global read and reduced, or a Dat read and modified: it changes
		}
		var before []byte // nil: zeros, for data never allocated (no copy of a huge Dat that only the loop may allocate)
		if a.Data.State != core.StateHostUnallocated {
			before = make([]byte, a.Data.Bytes())
			if err := currentValues(a.Data, before); err != nil {
				return nil, err
			}
		}
		snaps = append(snaps, readSnapshot{arg: i, st: a.Data, before: before, comps: comps})
	}
	return snaps, nil
}

// readComponents says which of st's values loop l only reads: all of
// them (nil, true) when no argument modifies st; the components its
// READ views pass (DatView) when every argument that modifies st is a
// view of another component; none (false) otherwise.
func readComponents(l *core.Loop, st *core.Storage) ([]int, bool) {
	var reads []int
	modified := false
	for j := range l.Args {
		b := &l.Args[j]
		if b.Data != st {
			continue
		}
		if b.Access.Modifies() {
			modified = true
			continue
		}
		if !b.View {
			reads = append(reads, -1)
		} else if !slices.Contains(reads, b.Comp) {
			reads = append(reads, b.Comp)
		}
	}
	if !modified {
		return nil, true
	}
	if slices.Contains(reads, -1) {
		return nil, false
	}
	for j := range l.Args {
		if b := &l.Args[j]; b.Data == st && b.Access.Modifies() && (!b.View || slices.Contains(reads, b.Comp)) {
			return nil, false
		}
	}
	sort.Ints(reads)
	return reads, true
}

// checked reports whether byte i of the data's values is one the
// snapshot compares.
func (sn *readSnapshot) checked(i int) bool {
	if sn.comps == nil {
		return true
	}
	return slices.Contains(sn.comps, i/sn.st.Type.Size()%sn.st.Dim)
}

// currentValues copies st's current values into dst without changing where
// they are.
func currentValues(st *core.Storage, dst []byte) error {
	if st.State == core.StateDevice {
		return readDevice(st, dst)
	}
	copy(dst, hostBytes(st))
	return nil
}

// same reports whether b holds the values before the loop.
func (sn *readSnapshot) same(b []byte) bool {
	if sn.comps != nil {
		return sn.firstChange(b) == len(b)
	}
	if sn.before == nil {
		for _, v := range b {
			if v != 0 {
				return false
			}
		}
		return true
	}
	return bytes.Equal(b, sn.before)
}

// firstChange is the first byte of b, among those the snapshot compares,
// that differs from the values before the loop; len(b) if none.
func (sn *readSnapshot) firstChange(b []byte) int {
	for i, v := range b {
		was := byte(0)
		if sn.before != nil {
			was = sn.before[i]
		}
		if v != was && sn.checked(i) {
			return i
		}
	}
	return len(b)
}

// readDevice copies st's device values into dst.
func readDevice(st *core.Storage, dst []byte) error {
	tmp := *st
	tmp.Host = unsafe.Pointer(unsafe.SliceData(dst))
	if err := st.Dev.Download(&tmp); err != nil {
		return fmt.Errorf("copying %s from the device: %w", st.Describe(), err)
	}
	return nil
}

func hostBytes(st *core.Storage) []byte {
	return unsafe.Slice((*byte)(st.Host), st.Bytes())
}

// verify compares every current copy of the data with the values from
// before the loop. When one differs it restores the values (the host copy
// becomes the current one) and describes the first changed value.
func (sn *readSnapshot) verify() (string, error) {
	st := sn.st
	if st.State == core.StateHostUnallocated {
		return "", nil // still never allocated: nothing wrote it
	}
	var changed []byte
	where := ""
	if st.Host != nil && (st.State == core.StateDeviceUnallocated || st.State == core.StateHost || st.State == core.StateBoth) {
		if h := hostBytes(st); !sn.same(h) {
			changed = append([]byte(nil), h...)
			where = "host"
		}
	}
	if changed == nil && st.Dev != nil && (st.State == core.StateDevice || st.State == core.StateBoth) {
		dev := make([]byte, st.Bytes())
		if err := readDevice(st, dev); err != nil {
			return "", err
		}
		if !sn.same(dev) {
			changed = dev
			where = "device"
		}
	}
	if changed == nil {
		return "", nil
	}
	before := sn.before
	if before == nil {
		before = make([]byte, len(changed))
	}
	st.EnsureHost()
	if sn.comps == nil {
		copy(hostBytes(st), before)
	} else {
		// Only the components read: the loop's writes to the others
		// stay. The host copy holds them all (changed is the copy that
		// was current).
		h := hostBytes(st)
		copy(h, changed)
		for i := range h {
			if sn.checked(i) {
				h[i] = before[i]
			}
		}
	}
	if st.Dev != nil {
		st.State = core.StateHost
	} else {
		st.State = core.StateDeviceUnallocated
	}
	size := st.Type.Size()
	i := sn.firstChange(changed)
	v := i / size
	off := v * size
	was := formatValue(st.Type, before[off:off+size])
	now := formatValue(st.Type, changed[off:off+size])
	pos := fmt.Sprintf("value %d", v)
	if !st.IsGlobal() {
		pos = fmt.Sprintf("element %d, component %d", v/st.Dim, v%st.Dim)
	}
	return fmt.Sprintf("the kernel wrote to READ %s: %s changed from %s to %s in the %s copy; its values before the loop were restored",
		st.Describe(), pos, was, now, where), nil
}

// formatValue prints one value of type t stored in b (native byte order,
// little-endian on every platform GoOP2 supports).
func formatValue(t core.ScalarType, b []byte) string {
	le := binary.LittleEndian
	switch t {
	case core.Float64:
		return fmt.Sprint(math.Float64frombits(le.Uint64(b)))
	case core.Float32:
		return fmt.Sprint(math.Float32frombits(le.Uint32(b)))
	case core.Int32:
		return fmt.Sprint(int32(le.Uint32(b)))
	case core.Int64:
		return fmt.Sprint(int64(le.Uint64(b)))
	case core.Uint32:
		return fmt.Sprint(le.Uint32(b))
	}
	return fmt.Sprintf("%x", b)
}
