package dist_test

import (
	"errors"
	"fmt"
	"testing"
	"unsafe"

	"github.com/goop2/op2/internal/core"
	"github.com/goop2/op2/internal/dist"
)

// fakeStage is a device's halo message memory (core.RowStage) kept in
// host memory, which the simulated network reads at its addresses as a
// CUDA-aware MPI reads device memory. It counts what it is asked to do.
type fakeStage struct {
	send, recv []byte
	addresses  bool // it has device addresses (CUDA), or not (OpenCL)
	// With host, it gives the messages host memory (core.HostMessages),
	// and counts the copies from or to other memory in elsewhere.
	host               bool
	hostSend, hostRecv []byte
	elsewhere          int

	gathers, scatters, reads, writes, finishes int
}

func (f *fakeStage) Reserve(send, recv int) error {
	if len(f.send) < send {
		f.send = make([]byte, send)
	}
	if len(f.recv) < recv {
		f.recv = make([]byte, recv)
	}
	return nil
}

func (f *fakeStage) rows(s *core.Storage, mem []byte, off int, rows *core.RowList, scatter bool) error {
	d, ok := s.Dev.(*devCopy)
	if !ok || d.stage != f {
		return errors.New("not this device's data")
	}
	elem := s.Dim * 8
	if off+len(rows.Idx)*elem > len(mem) {
		return fmt.Errorf("%d rows at %d overflow %d bytes", len(rows.Idx), off, len(mem))
	}
	packed := unsafe.Slice((*float64)(unsafe.Pointer(&mem[off])), len(rows.Idx)*s.Dim)
	for r, e := range rows.Idx {
		row := d.vals[int(e)*s.Dim : int(e+1)*s.Dim]
		if scatter {
			copy(row, packed[r*s.Dim:])
		} else {
			copy(packed[r*s.Dim:], row)
		}
	}
	return nil
}

func (f *fakeStage) Gather(s *core.Storage, off int, rows *core.RowList) error {
	f.gathers++
	return f.rows(s, f.send, off, rows, false)
}

func (f *fakeStage) Scatter(s *core.Storage, off int, rows *core.RowList) error {
	f.scatters++
	return f.rows(s, f.recv, off, rows, true)
}

// HostMessages is core.HostMessages's, when the stage has host memory.
func (f *fakeStage) HostMessages(send, recv int) ([]byte, []byte, bool) {
	if !f.host {
		return nil, nil, false
	}
	if len(f.hostSend) < send {
		f.hostSend = make([]byte, send)
	}
	if len(f.hostRecv) < recv {
		f.hostRecv = make([]byte, recv)
	}
	return f.hostSend, f.hostRecv, true
}

// within reports whether the n bytes at p lie in b.
func within(b []byte, p unsafe.Pointer, n int) bool {
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return len(b) > 0 && uintptr(p) >= lo && uintptr(p)+uintptr(n) <= lo+uintptr(len(b))
}

func (f *fakeStage) ReadSend(dst unsafe.Pointer, off, n int) error {
	f.reads++
	if f.host && !within(f.hostSend, dst, n) {
		f.elsewhere++
	}
	copy(unsafe.Slice((*byte)(dst), n), f.send[off:off+n])
	return nil
}

func (f *fakeStage) WriteRecv(src unsafe.Pointer, off, n int) error {
	f.writes++
	if f.host && !within(f.hostRecv, src, n) {
		f.elsewhere++
	}
	copy(f.recv[off:off+n], unsafe.Slice((*byte)(src), n))
	return nil
}

func (f *fakeStage) Addresses() (send, recv uintptr, ok bool) {
	if !f.addresses || len(f.send) == 0 || len(f.recv) == 0 {
		return 0, 0, false
	}
	return uintptr(unsafe.Pointer(&f.send[0])), uintptr(unsafe.Pointer(&f.recv[0])), true
}

func (f *fakeStage) Finish() error { f.finishes++; return nil }

// devCopy is a float64 Dat's device copy, in host memory, whose rows move
// through its device's stage. It counts whole-Dat copies.
type devCopy struct {
	vals               []float64
	stage              *fakeStage
	uploads, downloads int
}

func (d *devCopy) Upload(s *core.Storage) error {
	d.uploads++
	copy(d.vals, values(s))
	return nil
}

func (d *devCopy) Download(s *core.Storage) error {
	d.downloads++
	copy(values(s), d.vals)
	return nil
}

func (d *devCopy) Owner() any                      { return d.stage }
func (d *devCopy) Free()                           {}
func (d *devCopy) RowStage() (core.RowStage, bool) { return d.stage, true }

// onDevice gives s a device copy on stage's device holding its values,
// the only current copy; the host copy is overwritten with a marker.
func onDevice(s *core.Storage, stage *fakeStage) *devCopy {
	d := &devCopy{vals: append([]float64(nil), values(s)...), stage: stage}
	s.Dev, s.State = d, core.StateDevice
	for i := range values(s) {
		values(s)[i] = -7
	}
	return d
}

// checkDevHalo checks that every halo element of s's device copy holds
// the owner's value at version 0.
func checkDevHalo(s *core.Storage) error {
	h := s.Set.Halo.(*dist.SetHalo)
	vals := s.Dev.(*devCopy).vals
	for i := s.Set.Owned; i < s.Set.Total; i++ {
		for c := range s.Dim {
			if got, want := vals[i*s.Dim+c], value(s.Name, h.Global[i], c, 0); got != want {
				return fmt.Errorf("dat %q: device halo element %d (global %d) component %d: %g, want %g", s.Name, i, h.Global[i], c, got, want)
			}
		}
	}
	return nil
}

// TestHaloRowsOnDevice exchanges the halos of Dats whose device copies
// are current, alone and grouped with a Dat current on the host: the
// device's rows are gathered and scattered through its stage, with one
// copy each way between it and the host, or none when the MPI library
// takes device memory and every Dat of the exchange is on the device;
// no Dat is copied whole, and every halo value is the owner's.
func TestHaloRowsOnDevice(t *testing.T) {
	for _, c := range []struct {
		name             string
		mpiDevice, addrs bool // the MPI library takes device memory; the device has addresses
		host             bool // the device gives the messages host memory
		hostDat          bool // a Dat current on the host joins the group
		direct           int  // the exchanges (of 2) whose messages are device memory
	}{
		{"staged", false, true, false, false, 0},
		{"staged, page-locked", false, true, true, false, 0},
		{"direct", true, true, false, false, 2},
		{"no addresses", true, false, false, false, 0},
		{"mixed", true, true, false, true, 1}, // q alone goes direct, not with the host Dat
		{"mixed staged", false, true, true, true, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, ranks := range []int{2, 3} {
				noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
					rm.p.SetDeviceMemory(c.mpiDevice)
					h := rm.job.Exchange()
					stage := &fakeStage{addresses: c.addrs, host: c.host}
					q, p, s := newDat(rm.nodes, "q", 2), newDat(rm.nodes, "p", 1), newDat(rm.edges, "s", 1)
					dq := onDevice(q, stage)
					dp := onDevice(p, stage)
					host := newDat(rm.nodes, "host", 3)
					q.HaloStale, p.HaloStale, host.HaloStale = true, true, true
					// One Dat alone, then two (grouped), with the host
					// Dat or without.
					loops := []*core.Loop{
						newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)),
						newLoop("readp", rm.edges, viaMap(p, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)),
					}
					if c.hostDat {
						loops[1].Args = append(loops[1].Args, viaMap(host, rm.pedge, 0, core.Read))
						loops[1].Sig = core.Analyse(loops[1])
					}
					for _, l := range loops {
						if err := runOn(h, l, true, nil); err != nil {
							return err
						}
					}
					err := errors.Join(checkDevHalo(q), checkDevHalo(p))
					if c.hostDat {
						err = errors.Join(err, checkHalo(host, 0, true))
					}
					if err != nil {
						return err
					}
					if q.State != core.StateDevice || p.State != core.StateDevice {
						return fmt.Errorf("states %v, %v after the exchanges, want DEVICE", q.State, p.State)
					}
					if n := dq.downloads + dq.uploads + dp.downloads + dp.uploads; n != 0 {
						return fmt.Errorf("%d whole-Dat copies, want none", n)
					}
					if stage.gathers == 0 || stage.scatters == 0 {
						return fmt.Errorf("%d gathers and %d scatters on the device, want some", stage.gathers, stage.scatters)
					}
					// One copy each way per exchange through the host;
					// a wait for the gathers before each direct one.
					if staged := 2 - c.direct; stage.reads != staged || stage.writes != staged || stage.finishes != c.direct {
						return fmt.Errorf("%d reads and %d writes of message memory, %d waits for the gathers; want %d, %d, %d",
							stage.reads, stage.writes, stage.finishes, staged, staged, c.direct)
					}
					if stage.elsewhere != 0 {
						return fmt.Errorf("%d copies between the device and other host memory than the stage gave", stage.elsewhere)
					}
					if sent, _ := h.Messages(); (h.DeviceMessages() > 0) != (c.direct > 0) || h.DeviceMessages() > sent {
						return fmt.Errorf("%d of %d messages device memory, with %d exchanges direct", h.DeviceMessages(), sent, c.direct)
					}
					return nil
				}))
			}
		})
	}
}

// TestHaloRowsUploadedDuringLoop: a Dat current only on the host when its
// exchange begins, which the loop uploads before the rank waits for its
// messages (its core elements run in between), gets the rows that arrive
// in its device copy, which stays current, and not in its host copy only.
func TestHaloRowsUploadedDuringLoop(t *testing.T) {
	noErrors(t, onRanks(t, 3, 0, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		stage := &fakeStage{}
		q, s := newDat(rm.nodes, "q", 2), newDat(rm.edges, "s", 1)
		d := &devCopy{vals: make([]float64, len(values(q))), stage: stage}
		q.Dev, q.State, q.HaloStale = d, core.StateHost, true
		l := newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write))
		if err := h.Agree(l, nil); err != nil {
			return err
		}
		if err := h.Begin(l, true); err != nil {
			return err
		}
		if err := q.DeviceAccess(stage, true, false, nil); err != nil { // the loop's upload
			return err
		}
		if err := h.Wait(l); err != nil {
			return err
		}
		if err := h.End(l); err != nil {
			return err
		}
		if q.State != core.StateDevice || d.uploads != 1 || d.downloads != 0 {
			return fmt.Errorf("after the exchange: state %v, %d uploads, %d downloads; want DEVICE, 1, 0", q.State, d.uploads, d.downloads)
		}
		if stage.scatters == 0 || stage.writes != 1 {
			return fmt.Errorf("%d scatters, %d copies to the device; want some, 1", stage.scatters, stage.writes)
		}
		return checkDevHalo(q)
	}))
}

// TestHaloRowsOnTwoDevices exchanges, grouped, the halos of two Dats on
// two devices, whose rows interleave in the messages (3 ranks: several
// neighbours): each device's rows reach the messages, and the halos, as
// they should.
func TestHaloRowsOnTwoDevices(t *testing.T) {
	noErrors(t, onRanks(t, 3, 0, func(rm *rankMesh) error {
		h := rm.job.Exchange()
		a, b := &fakeStage{}, &fakeStage{}
		q, p, s := newDat(rm.nodes, "q", 2), newDat(rm.nodes, "p", 1), newDat(rm.edges, "s", 1)
		onDevice(q, a)
		onDevice(p, b)
		q.HaloStale, p.HaloStale = true, true
		l := newLoop("readqp", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(p, rm.pedge, 1, core.Read), direct(s, core.Write))
		if err := runOn(h, l, true, nil); err != nil {
			return err
		}
		return errors.Join(checkDevHalo(q), checkDevHalo(p))
	}))
}

// TestHaloRowsOneLaunchPerDat: on 3 ranks of a ring (two neighbours
// each), a Dat alone in its exchange has its rows gathered and scattered
// on the device in one launch each way, not one per neighbour; two Dats
// grouped, whose parts interleave in the messages, in one per Dat and
// neighbour. Every halo value is the owner's either way.
func TestHaloRowsOneLaunchPerDat(t *testing.T) {
	for _, c := range []struct {
		name    string
		grouped bool
		want    int // gathers and scatters on each rank
	}{
		{"alone", false, 1},
		{"grouped", true, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			noErrors(t, onRanks(t, 3, 0, func(rm *rankMesh) error {
				h := rm.job.Exchange()
				stage := &fakeStage{}
				q, p, s := newDat(rm.nodes, "q", 2), newDat(rm.nodes, "p", 1), newDat(rm.edges, "s", 1)
				onDevice(q, stage)
				onDevice(p, stage)
				q.HaloStale = true
				args := []core.Arg{viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write)}
				if c.grouped {
					p.HaloStale = true
					args = append(args, viaMap(p, rm.pedge, 1, core.Read))
				}
				if err := runOn(h, newLoop("read", rm.edges, args...), true, nil); err != nil {
					return err
				}
				if n := len(rm.nodes.Halo.(*dist.SetHalo).Neighbours); n != 2 {
					return fmt.Errorf("%d neighbours, want 2", n)
				}
				if stage.gathers != c.want || stage.scatters != c.want {
					return fmt.Errorf("%d gathers and %d scatters on the device, want %d each", stage.gathers, stage.scatters, c.want)
				}
				err := checkDevHalo(q)
				if c.grouped {
					err = errors.Join(err, checkDevHalo(p))
				}
				return err
			}))
		})
	}
}

// TestHaloRowsForHostLoop: a loop on the host reads a Dat current only on
// its device (another runtime's, or one op2.Use switched from): the loop
// binds the host copy after Begin, downloading it, so the rows received
// go to the host copy, which the loop reads, and the device copy is then
// stale; whether or not the MPI library takes device memory. (They went
// to the device copy, current too once downloaded, and the loop read the
// old halo values.)
func TestHaloRowsForHostLoop(t *testing.T) {
	for _, mpiDevice := range []bool{false, true} {
		for _, ranks := range []int{2, 3} {
			noErrors(t, onRanks(t, ranks, 0, func(rm *rankMesh) error {
				rm.p.SetDeviceMemory(mpiDevice)
				h := rm.job.Exchange()
				stage := &fakeStage{addresses: true}
				q, s := newDat(rm.nodes, "q", 2), newDat(rm.edges, "s", 1)
				onDevice(q, stage)
				q.HaloStale = true
				l := newLoop("readq", rm.edges, viaMap(q, rm.pedge, 0, core.Read), viaMap(q, rm.pedge, 1, core.Read), direct(s, core.Write))
				if err := h.Agree(l, nil); err != nil {
					return err
				}
				if err := h.Begin(l, false); err != nil {
					return err
				}
				if err := q.HostAccess(false); err != nil { // the host loop's Bind
					return err
				}
				if err := h.Wait(l); err != nil {
					return err
				}
				if err := h.End(l); err != nil {
					return err
				}
				if err := checkHalo(q, 0, true); err != nil {
					return fmt.Errorf("MPI device memory %v: %w", mpiDevice, err)
				}
				if q.State != core.StateHost {
					return fmt.Errorf("state %v after the exchange, want HOST (the device's halo is stale)", q.State)
				}
				return nil
			}))
		}
	}
}
