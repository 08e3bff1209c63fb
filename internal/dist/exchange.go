package dist

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/mpi"
)

// The messages of one halo exchange: every Dat exchanged travels in one
// message to and from each neighbouring rank, a Dat's rows at the offset
// the message's layout gives them (a single loop's exchange, or a chain's
// exchange point).
//
// The rows of a Dat whose device copy is current move on the device
// (core.RowStage): they are gathered into the device's send memory at
// their offsets, which goes to the host in one copy, and the rows that
// arrive go to the device's receive memory in one copy and are scattered
// from there. When the MPI library reads and writes device memory itself
// (World.DeviceMemory: a CUDA-aware MPI) and every Dat of the exchange is
// on the device, the messages are the device memory itself and nothing
// passes through the host. A Dat current on the host is packed and
// unpacked there. Each rank chooses for itself: the messages' bytes are
// the same either way.

// groupTag is the tag of grouped messages (a chain's, and from groupTag
// to groupTag+groupTags-1 a single loop's of several Dats: loopTag); a
// single loop's messages of one Dat have tags below 32000. Only one
// exchange per pair of ranks is in flight at a time.
const groupTag = 32001

// groupTags is the number of tags of a single loop's grouped messages.
const groupTags = 90

// peerMsg is the message to and from one neighbouring rank: its bytes and
// their offsets in the exchange's buffers.
type peerMsg struct {
	rank                         int
	send, recv, sendOff, recvOff int
	sendCursor, recvCursor       int
}

// groupPart is one Dat's part of the messages with one neighbour.
type groupPart struct {
	s *core.Storage
	n *Neighbour
	// The neighbour's send and receive rows, and all the Dat's set's
	// (SetHalo.rowLists).
	sendRows, recvRows *core.RowList
	lists              *rowLists
	elem               int
	peer               int // index in h.peers
	send, rcv          int // offsets in the send and receive buffers
	// The stage the send rows are gathered through (nil: packed on the
	// host), and the one the received rows are scattered through, chosen
	// as they arrive.
	sendStage, recvStage core.RowStage
}

// stageSpan is the bytes of the messages that cross between the host and
// one stage's memory in one copy.
type stageSpan struct {
	st     core.RowStage
	lo, hi int
}

// addSpan extends the span of stage st in spans over bytes [lo, hi).
func addSpan(spans []stageSpan, st core.RowStage, lo, hi int) []stageSpan {
	for i := range spans {
		if spans[i].st == st {
			spans[i].lo, spans[i].hi = min(spans[i].lo, lo), max(spans[i].hi, hi)
			return spans
		}
	}
	return append(spans, stageSpan{st, lo, hi})
}

// pinnedBuf is a message buffer that MPI may read or write after the call
// that posts it.
type pinnedBuf struct{ b []byte }

// grow returns a pinned buffer of at least n bytes, replacing *p when it
// is shorter (only when no message is in flight).
func grow(p **pinnedBuf, n int) []byte {
	if *p == nil || len((*p).b) < n {
		size := n + 1
		if *p != nil {
			size = max(size, 2*len((*p).b))
		}
		nb := &pinnedBuf{b: make([]byte, size)}
		core.KeepPinned(nb, &nb.b[0])
		*p = nb
	}
	return (*p).b
}

// beginExchange starts the exchange of the Dats in group, its messages
// tagged tag.
func (h *Halo) beginExchange(l *core.Loop, group []*core.Storage, tag int32) error {
	h.parts, h.peers = h.parts[:0], h.peers[:0]
	exchanged := 0
	for _, s := range group {
		s.HaloStale, s.HostDirty = false, false
		sh, ok := s.Set.Halo.(*SetHalo)
		if !ok || len(sh.Neighbours) == 0 {
			continue
		}
		exchanged++
		rl := sh.rowLists()
		elem := s.Dim * s.Type.Size()
		for k := range sh.Neighbours {
			n := &sh.Neighbours[k]
			p := -1
			for j := range h.peers {
				if h.peers[j].rank == n.Rank {
					p = j
					break
				}
			}
			if p < 0 {
				p = len(h.peers)
				h.peers = append(h.peers, peerMsg{rank: n.Rank})
			}
			h.peers[p].send += len(n.Send) * elem
			h.peers[p].recv += (int(n.RecvExec[1]-n.RecvExec[0]) + int(n.RecvNonexec[1]-n.RecvNonexec[0])) * elem
			h.parts = append(h.parts, groupPart{s: s, n: n, sendRows: rl.send[k], recvRows: rl.recv[k], lists: rl, elem: elem, peer: p})
		}
	}
	sendTotal, recvTotal := 0, 0
	for j := range h.peers {
		pm := &h.peers[j]
		pm.sendOff, pm.recvOff = sendTotal, recvTotal
		pm.sendCursor, pm.recvCursor = sendTotal, recvTotal
		sendTotal += pm.send
		recvTotal += pm.recv
	}
	for k := range h.parts {
		pt := &h.parts[k]
		pm := &h.peers[pt.peer]
		pt.send, pt.rcv = pm.sendCursor, pm.recvCursor
		pm.sendCursor += len(pt.n.Send) * pt.elem
		pm.recvCursor += (int(pt.n.RecvExec[1]-pt.n.RecvExec[0]) + int(pt.n.RecvNonexec[1]-pt.n.RecvNonexec[0])) * pt.elem
	}
	if err := h.chooseStage(sendTotal, recvTotal); err != nil {
		h.parts = h.parts[:0]
		return fmt.Errorf("%s: halo exchange of %s: %w", l.Name(), h.exchangeNames(), err)
	}
	if err := h.pack(); err != nil {
		h.parts = h.parts[:0]
		return fmt.Errorf("%s: %w", l.Name(), err)
	}
	var sendAt, recvAt uintptr
	if h.onDevice {
		sendAt, recvAt, _ = h.stage.Addresses()
	} else {
		sendAt, recvAt = uintptr(unsafe.Pointer(&h.hsend[0])), uintptr(unsafe.Pointer(&h.hrecv[0]))
	}
	for j := range h.peers {
		pm := &h.peers[j]
		if pm.send > 0 && !h.DropSends {
			h.sends = append(h.sends, mpi.Msg{Buf: sendAt + uintptr(pm.sendOff), Bytes: int64(pm.send), Rank: int32(pm.rank), Tag: tag})
		}
		if pm.recv > 0 {
			h.recvs = append(h.recvs, mpi.Msg{Buf: recvAt + uintptr(pm.recvOff), Bytes: int64(pm.recv), Rank: int32(pm.rank), Tag: tag})
		}
	}
	if h.trace != nil && len(h.peers) > 0 {
		h.trace.LogAttrs(context.Background(), core.LevelTrace, "op2: halo exchange", slog.Int("rank", h.w.Rank()),
			slog.String("kernel", l.Kernel.Name), slog.String("dat", strings.Join(h.datNames(false), ",")), slog.Int("neighbours", len(h.peers)),
			slog.Int("send_bytes", sendTotal), slog.Int("recv_bytes", recvTotal), slog.Bool("device_memory", h.onDevice))
	}
	h.exchanges += exchanged
	if len(h.recvs)+len(h.sends) == 0 {
		h.parts = h.parts[:0]
		return nil
	}
	return h.start()
}

// chooseStage decides which parts' send rows are gathered on a device
// and whether the messages are a device's memory, and makes the buffers
// they need long enough: each device's send and receive memory, and
// unless the messages are device memory the host's (hsend, hrecv): the
// device's page-locked memory when one device moves rows, else pinned Go
// memory. The messages
// are device memory when the MPI library takes it and every part moves
// through one device's stage both ways; the receive side is decided now
// then, else as the rows arrive (waitExchange), since the loop may upload
// a Dat in between.
func (h *Halo) chooseStage(sendTotal, recvTotal int) error {
	h.onDevice, h.stage = false, nil
	h.stages = h.stages[:0]
	var one core.RowStage // the stage of every part both ways, if one
	all := true
	var last *core.Storage
	var send, recv core.RowStage
	for k := range h.parts {
		pt := &h.parts[k]
		if pt.s != last { // a Dat's parts are consecutive
			last = pt.s
			var err error
			if send, err = pt.s.SendStage(); err != nil {
				return err
			}
			if recv, err = pt.s.RecvStage(h.device); err != nil {
				return err
			}
			for _, st := range [2]core.RowStage{send, recv} {
				if st != nil && !slices.Contains(h.stages, st) {
					h.stages = append(h.stages, st)
				}
			}
		}
		pt.sendStage, pt.recvStage = nil, nil
		if len(pt.sendRows.Idx) > 0 {
			pt.sendStage = send
			all = all && send != nil && (one == nil || send == one)
			one = cmp.Or(one, send)
		}
		if len(pt.recvRows.Idx) > 0 {
			all = all && recv != nil && (one == nil || recv == one)
			one = cmp.Or(one, recv)
		}
	}
	for _, st := range h.stages {
		if err := st.Reserve(sendTotal, recvTotal); err != nil {
			return err
		}
	}
	if all && one != nil && h.w.DeviceMemory() {
		if _, _, ok := one.Addresses(); ok {
			h.onDevice, h.stage = true, one
			for k := range h.parts {
				if pt := &h.parts[k]; len(pt.recvRows.Idx) > 0 {
					pt.recvStage = one
				}
			}
			return nil
		}
	}
	if len(h.stages) == 1 {
		if hm, ok := h.stages[0].(core.HostMessages); ok {
			if send, recv, ok := hm.HostMessages(sendTotal+1, recvTotal+1); ok {
				h.hsend, h.hrecv = send, recv
				return nil
			}
		}
	}
	h.hsend, h.hrecv = grow(&h.gsend, sendTotal), grow(&h.grecv, recvTotal)
	return nil
}

// pack puts every part's send rows in its place in the messages: the
// rows on a device gathered there (then, unless the messages are device
// memory, copied to the host buffer in one piece per device), the others
// packed from their host copies.
func (h *Halo) pack() error {
	if h.DropSends {
		return nil
	}
	h.spans = h.spans[:0]
	for k := 0; k < len(h.parts); {
		pt := &h.parts[k]
		n, st, rows := h.datRun(k, false)
		k += n
		if st == nil || len(rows.Idx) == 0 {
			continue
		}
		if err := pt.s.GatherRows(st, pt.send, rows); err != nil {
			return err
		}
		h.spans = addSpan(h.spans, st, pt.send, pt.send+len(rows.Idx)*pt.elem)
	}
	if h.onDevice {
		return h.stage.Finish()
	}
	if len(h.stages) > 1 {
		// Dats on two devices: one device's span may cover the other's
		// rows, so each part's rows come on their own.
		h.spans = h.spans[:0]
		for k := range h.parts {
			if pt := &h.parts[k]; pt.sendStage != nil {
				h.spans = append(h.spans, stageSpan{pt.sendStage, pt.send, pt.send + len(pt.sendRows.Idx)*pt.elem})
			}
		}
	}
	for _, sp := range h.spans {
		if err := sp.st.ReadSend(unsafe.Pointer(&h.hsend[sp.lo]), sp.lo, sp.hi-sp.lo); err != nil {
			return fmt.Errorf("copying %d bytes of halo rows of %s from the device: %w", sp.hi-sp.lo, h.exchangeNames(), err)
		}
		core.CountCopy(false, sp.hi-sp.lo)
	}
	for k := range h.parts { // after the copies, which may span their places
		pt := &h.parts[k]
		if pt.sendStage != nil || len(pt.sendRows.Idx) == 0 {
			continue
		}
		if err := pt.s.HostAccess(false); err != nil {
			return fmt.Errorf("dat %q: %w", pt.s.Name, err)
		}
		mpi.Pack(unsafe.Pointer(&h.hsend[pt.send]), pt.s.Host, pt.sendRows.Idx, pt.elem)
	}
	return nil
}

// waitExchange completes the exchange and copies what arrived into the
// halos: for a loop on a device, into a Dat's device copy when it is
// current (alone or with the host copy), scattered there from the
// device's receive memory (which, unless the messages are that memory,
// the host buffer crosses to in one copy per device), else into its host
// copy; for a loop on the host, into the host copy, which the loop bound
// after Begin (downloading a Dat only its device held).
func (h *Halo) waitExchange(l *core.Loop) error {
	defer func() {
		clear(h.parts)
		h.parts = h.parts[:0]
		h.stage = nil
		clear(h.spans)
		h.spans = h.spans[:0]
		clear(h.stages)
		h.stages = h.stages[:0]
	}()
	if err := h.w.Wait(); err != nil {
		return fmt.Errorf("%s: halo exchange%s: %w", l.Name(), h.describePending(err), err)
	}
	if !h.onDevice {
		h.spans = h.spans[:0]
		for k := range h.parts {
			pt := &h.parts[k]
			if len(pt.recvRows.Idx) == 0 {
				continue
			}
			st, err := pt.s.RecvStage(h.device)
			if err != nil {
				return fmt.Errorf("%s: %w", l.Name(), err)
			}
			if pt.recvStage = st; st != nil {
				h.spans = addSpan(h.spans, st, pt.rcv, pt.rcv+len(pt.recvRows.Idx)*pt.elem)
			}
		}
		for _, sp := range h.spans {
			err := sp.st.Reserve(0, sp.hi)
			if err == nil {
				err = sp.st.WriteRecv(unsafe.Pointer(&h.hrecv[sp.lo]), sp.lo, sp.hi-sp.lo)
			}
			if err != nil {
				return fmt.Errorf("%s: copying %d bytes of halo rows of %s to the device: %w", l.Name(), sp.hi-sp.lo, h.exchangeNames(), err)
			}
			core.CountCopy(true, sp.hi-sp.lo)
		}
	}
	for k := 0; k < len(h.parts); {
		pt := &h.parts[k]
		n, st, rows := h.datRun(k, true)
		k += n
		switch {
		case len(rows.Idx) == 0:
		case st != nil:
			if err := pt.s.ScatterRows(st, pt.rcv, rows); err != nil {
				return fmt.Errorf("%s: %w", l.Name(), err)
			}
		default:
			if err := pt.s.HostAccess(true); err != nil { // the device copy, if any, is now stale
				return fmt.Errorf("%s: dat %q: %w", l.Name(), pt.s.Name, err)
			}
			mpi.Unpack(pt.s.Host, unsafe.Pointer(&h.hrecv[pt.rcv]), rows.Idx, pt.elem)
		}
	}
	return nil
}

// datRun returns what moves from part k on in one go, in the send (with
// recv, receive) messages: the number of parts, the stage they move
// through (nil: the host) and their rows. When the parts from k on are
// every part of one Dat, one after another in the messages and moving
// through one stage, that is all of them with the list of all their
// rows (rowLists.whole), so that they move in one launch: the case of a
// Dat alone in its exchange (its parts are in neighbour order, as the
// neighbours' messages are). Else it is part k alone.
func (h *Halo) datRun(k int, recv bool) (n int, st core.RowStage, rows *core.RowList) {
	first := &h.parts[k]
	side := func(pt *groupPart) (int, core.RowStage, *core.RowList) {
		if recv {
			return pt.rcv, pt.recvStage, pt.recvRows
		}
		return pt.send, pt.sendStage, pt.sendRows
	}
	end, one, own := side(first)
	for j := k; j < len(h.parts) && h.parts[j].s == first.s; j++ {
		pt := &h.parts[j]
		off, ps, pr := side(pt)
		if off != end || len(pr.Idx) > 0 && (ps == nil || st != nil && ps != st) {
			return 1, one, own
		}
		end += len(pr.Idx) * pt.elem
		if len(pr.Idx) > 0 {
			st = ps
		}
		n++
	}
	if n < 2 || n != len(first.lists.send) {
		return 1, one, own
	}
	return n, st, first.lists.whole(recv)
}

// exchangeNames names the Dats of the exchange in progress: dat "q", or
// dats "q", "p".
func (h *Halo) exchangeNames() string {
	names := h.datNames(true)
	if len(names) == 1 {
		return "dat " + names[0]
	}
	return "dats " + strings.Join(names, ", ")
}

// datNames lists the names of the Dats of the exchange in progress,
// quoted or not.
func (h *Halo) datNames(quoted bool) []string {
	var names []string
	var last *core.Storage
	for k := range h.parts {
		if s := h.parts[k].s; s != last {
			if quoted {
				names = append(names, fmt.Sprintf("%q", s.Name))
			} else {
				names = append(names, s.Name)
			}
			last = s
		}
	}
	return names
}

// DeviceMessages is the number of halo messages this rank posted as
// device memory (World.DeviceMemory).
func (h *Halo) DeviceMessages() int64 { return h.deviceMessages }

// start counts the messages about to be posted and posts them.
func (h *Halo) start() error {
	h.messages += int64(len(h.sends))
	if h.onDevice {
		h.deviceMessages += int64(len(h.sends))
	}
	for i := range h.sends {
		h.sentBytes += h.sends[i].Bytes
	}
	return h.w.Start(h.recvs, h.sends)
}
