// Package airfoil is OP2's Airfoil benchmark written against GoOP2: the
// problem's sets, maps, data and constants, its five C kernels and the
// time-marching driver. cmd/airfoil and cmd/op2bench run it.
package airfoil

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/rss"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/vtk"
)

// The flow constants. OP2's reference computes them in single precision;
// these are those single-precision values as doubles.
var (
	gamValue  = 1.3999999761581421
	gm1Value  = 0.39999997615814209
	cflValue  = 0.89999997615814209
	epsValue  = 0.05000000074505806
	qinfValue = []float64{1, 0.47328638567047632, 0, 2.6120001504421322}
)

// Solver holds the Airfoil problem declared to GoOP2.
type Solver struct {
	nodes, edges, bedges, cells    *op2.Set
	pedge, pecell, pbedge, pbecell *op2.Map
	pcell                          *op2.Map
	bound                          *op2.Dat[int32]
	x                              *op2.Dat[float64]
	q, qold, res, adt              *op2.Dat[float64]
	rms                            *op2.Global[float64]

	gam, gm1, cfl, eps, qinf *op2.Const[float64]

	saveSoln, adtCalc, resCalc, bresCalc, update *op2.Kernel

	// Chained makes Iterate record each iteration's loops in one
	// op2.Chain scope (the rms resets order themselves after the
	// recorded loops). The results are the same bits.
	Chained bool

	// CheckpointPath, when not empty, makes Iterate save an
	// op2.Checkpoint there every CheckpointEvery iterations (its state:
	// the iteration) and, when the file exists as Iterate starts,
	// restore it and go on after the iteration it holds: a run killed
	// and started again with the same arguments, on any number of ranks,
	// prints the rms lines still to come, bit for bit those of a run
	// never stopped.
	CheckpointPath  string
	CheckpointEvery int
	// Checkpoints says what the checkpoints of the last Iterate cost.
	Checkpoints CheckpointStats

	// AfterIteration, when not nil, is called after each iteration's
	// loops with the iteration's number (the fault tests stop a rank
	// there).
	AfterIteration func(iter int)
}

// CheckpointStats is the time of Iterate's checkpoints: Written of them
// in Write, and the restore it began with (Restored).
type CheckpointStats struct {
	Written        int
	Write, Restore time.Duration
	Restored       bool
	// Done is the iteration the restored checkpoint was at (0 without
	// one): Iterate ran the iterations after it.
	Done int
	// Extra is the most memory this rank's resident size grew by while
	// a checkpoint was written (its peak during the write less its size
	// before), where the system reports it (Linux).
	Extra int64
}

// iterKey is the key of the iteration in a checkpoint's state.
const iterKey = "airfoil.iteration"

// New declares the problem on mesh m: every set, map, dat and constant,
// with q initialised to the free stream. Close withdraws the constants.
// The mesh must have at least one cell: the solver's rms is a mean over
// the cells.
func New(m *mesh.Mesh) (*Solver, error) {
	if m == nil || m.NCell < 1 {
		return nil, fmt.Errorf("airfoil: the mesh has no cells; the solver needs at least one (its rms change is a mean over the cells)")
	}
	return declare(m)
}

// CheckPartitioner returns nil for a partitioner NewDistributed takes
// ("", "ptscotch", "rcb", "block", "metis") and else an error naming it
// and those it takes, so that a program can check the name before it
// reads a mesh, whatever the number of ranks.
func CheckPartitioner(name string) error {
	switch name {
	case "", "ptscotch", "rcb", "block", "metis":
		return nil
	}
	return fmt.Errorf("airfoil: unknown partitioner %q (ptscotch, rcb, block or metis)", name)
}

// NewDistributed declares the problem on the MPI ranks and partitions it:
// each rank passes its block of every set, with global indices in the
// maps (as mesh.ReadBlock, mesh.GenerateBlock and hdf5.ReadMeshBlock give
// them), or rank 0 the whole mesh and the other ranks nil (an empty
// block). The mesh is then partitioned with the named partitioner
// ("ptscotch" or "metis" on the cells sharing an edge, "rcb" on the node
// coordinates, "block"; "" chooses ptscotch when it loads on every rank,
// else rcb) and distributed. It is collective: every rank calls it. The
// mesh must have at least one cell over all ranks; a rank's block may be
// empty. Without MPI it is New followed by a partition that changes
// nothing.
func NewDistributed(m *mesh.Mesh, partitioner string) (*Solver, *op2.PartitionInfo, error) {
	if err := CheckPartitioner(partitioner); err != nil {
		return nil, nil, err
	}
	if m == nil {
		m = &mesh.Mesh{}
	}
	s, err := declare(m)
	if err != nil {
		return nil, nil, err
	}
	var p op2.Partitioner
	switch partitioner {
	case "":
		p = op2.AutoPartitioner(s.pecell, s.x)
	case "rcb":
		p = op2.RCBPartitioner(s.x)
	case "block":
		p = op2.BlockPartitioner()
	case "metis":
		p = op2.METISPartitioner(s.pecell)
	case "ptscotch":
		p = op2.PTScotchPartitioner(s.pecell)
	}
	info, err := op2.Partition(p)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	// Every rank knows the global size now, so every rank gives the error.
	if s.cells.GlobalSize() < 1 {
		s.Close()
		return nil, nil, fmt.Errorf("airfoil: the mesh has no cells; the solver needs at least one (its rms change is a mean over the cells)")
	}
	return s, info, nil
}

func declare(m *mesh.Mesh) (*Solver, error) {
	s := &Solver{}
	var err error
	set := func(n int, name string) *op2.Set {
		if err != nil {
			return nil
		}
		var st *op2.Set
		st, err = op2.NewSet(n, name)
		return st
	}
	s.nodes = set(m.NNode, "nodes")
	s.edges = set(m.NEdge, "edges")
	s.bedges = set(m.NBedge, "bedges")
	s.cells = set(m.NCell, "cells")
	mp := func(from, to *op2.Set, arity int, v []int32, name string) *op2.Map {
		if err != nil {
			return nil
		}
		var mm *op2.Map
		mm, err = op2.NewMap(from, to, arity, v, name)
		return mm
	}
	s.pedge = mp(s.edges, s.nodes, 2, m.Edge, "pedge")
	s.pecell = mp(s.edges, s.cells, 2, m.Ecell, "pecell")
	s.pbedge = mp(s.bedges, s.nodes, 2, m.Bedge, "pbedge")
	s.pbecell = mp(s.bedges, s.cells, 1, m.Becell, "pbecell")
	s.pcell = mp(s.cells, s.nodes, 4, m.Cell, "pcell")
	dat := func(set *op2.Set, dim int, v []float64, name string) *op2.Dat[float64] {
		if err != nil {
			return nil
		}
		var d *op2.Dat[float64]
		d, err = op2.NewDat(set, dim, v, name)
		return d
	}
	s.x = dat(s.nodes, 2, m.X, "p_x")
	q0 := make([]float64, 4*m.NCell)
	for i := range q0 {
		q0[i] = qinfValue[i%4]
	}
	s.q = dat(s.cells, 4, q0, "p_q")
	s.qold = dat(s.cells, 4, nil, "p_qold")
	s.res = dat(s.cells, 4, nil, "p_res")
	s.adt = dat(s.cells, 1, nil, "p_adt")
	if err != nil {
		return nil, err
	}
	if s.bound, err = op2.NewDat(s.bedges, 1, m.Bound, "p_bound"); err != nil {
		return nil, err
	}
	if s.rms, err = op2.NewGlobal[float64](1, nil, "rms"); err != nil {
		return nil, err
	}
	cst := func(v []float64, name string) *op2.Const[float64] {
		if err != nil {
			return nil
		}
		var c *op2.Const[float64]
		c, err = op2.NewConst(len(v), v, name)
		return c
	}
	s.gam = cst([]float64{gamValue}, "gam")
	s.gm1 = cst([]float64{gm1Value}, "gm1")
	s.cfl = cst([]float64{cflValue}, "cfl")
	s.eps = cst([]float64{epsValue}, "eps")
	s.qinf = cst(qinfValue, "qinf")
	if err != nil {
		s.Close()
		return nil, err
	}
	s.saveSoln = op2.NewKernel(saveSolnSrc, "save_soln")
	s.adtCalc = op2.NewKernel(adtCalcSrc, "adt_calc")
	s.resCalc = op2.NewKernel(resCalcSrc, "res_calc")
	s.bresCalc = op2.NewKernel(bresCalcSrc, "bres_calc")
	s.update = op2.NewKernel(updateSrc, "update")

	return s, nil
}

// Renumber reorders the mesh for locality before the first iteration
// (op2.Renumber): "rcm" orders the cells by reverse Cuthill–McKee on the
// cells sharing an edge, "rcb" the cells by recursive coordinate bisection
// of their centres (op2.RCBCentreOrdering), "rcb-nodes" the nodes by
// recursive coordinate bisection of their coordinates; the other sets
// follow. Q and WriteVTK still give the mesh's declared numbering.
func (s *Solver) Renumber(ordering string) (*op2.RenumberInfo, error) {
	switch ordering {
	case "rcm":
		return op2.Renumber(op2.RCMOrdering(s.pecell))
	case "rcb":
		return op2.Renumber(op2.RCBCentreOrdering(s.x, s.pcell))
	case "rcb-nodes":
		return op2.Renumber(op2.RCBOrdering(s.x))
	}
	return nil, fmt.Errorf("airfoil: unknown ordering %q (rcm, rcb or rcb-nodes)", ordering)
}

// PoorLocality returns the names of the mesh's maps whose numbering has
// poor locality (op2.Map.Locality), with their median gaps: loops run
// faster once such a mesh is renumbered (Renumber).
func (s *Solver) PoorLocality() []string {
	var out []string
	for _, m := range []*op2.Map{s.pedge, s.pecell, s.pbedge, s.pbecell, s.pcell} {
		if gap, poor := m.Locality(); poor {
			out = append(out, fmt.Sprintf("%s (median gap %d)", m.Name(), gap))
		}
	}
	return out
}

// Close withdraws the constants so that another Solver can declare them.
func (s *Solver) Close() {
	for _, c := range []*op2.Const[float64]{s.gam, s.gm1, s.cfl, s.eps, s.qinf} {
		if c != nil {
			c.Remove()
		}
	}
}

// Iterate runs niter iterations of the time-marching loop, printing the
// rms change of the solution every 100 iterations in OP2's format. It
// returns the printed rms values and the wall time of the loop. Resumed
// from a checkpoint (CheckpointPath) it runs the iterations after the
// checkpoint's (Checkpoints.Done) and prints their lines; a checkpoint at
// iteration niter leaves none to run: it says so, and rms is empty.
func (s *Solver) Iterate(niter int, out io.Writer) (rms []float64, elapsed time.Duration, err error) {
	if niter < 0 {
		return nil, 0, fmt.Errorf("airfoil: %d iterations: the number of iterations must not be negative", niter)
	}
	// iteration runs one iteration's loops. The rms resets order
	// themselves after the recorded loops (Global.SetValue), so one
	// Chain holds the whole iteration.
	iteration := func() error {
		if err := s.saveSolnLoop(); err != nil {
			return err
		}
		for k := 0; k < 2; k++ {
			for _, loop := range []func() error{s.adtCalcLoop, s.resCalcLoop, s.bresCalcLoop} {
				if err := loop(); err != nil {
					return err
				}
			}
			s.rms.SetValue(0)
			if err := s.updateLoop(); err != nil {
				return err
			}
		}
		return nil
	}
	run := iteration
	if s.Chained {
		run = func() error { return op2.Chain(iteration) }
	}
	s.Checkpoints = CheckpointStats{}
	first, err := s.resume(niter)
	if err != nil {
		return nil, 0, err
	}
	if first > niter && s.CheckpointPath != "" && op2.Rank() == 0 {
		fmt.Fprintf(out, "checkpoint %s is at iteration %d, the last asked for: no iterations left to run\n", s.CheckpointPath, niter)
	}
	start := time.Now()
	for iter := first; iter <= niter; iter++ {
		if err := run(); err != nil {
			return nil, 0, err
		}
		if s.AfterIteration != nil {
			s.AfterIteration(iter)
		}
		if s.CheckpointPath != "" && s.CheckpointEvery > 0 && iter%s.CheckpointEvery == 0 && iter < niter {
			before, _ := rss.Status()
			rss.ResetPeak()
			t := time.Now()
			if err := op2.Checkpoint(s.CheckpointPath, map[string][]byte{iterKey: []byte(strconv.Itoa(iter))}); err != nil {
				return nil, 0, err
			}
			s.Checkpoints.Written++
			s.Checkpoints.Write += time.Since(t)
			if _, peak := rss.Status(); before > 0 {
				s.Checkpoints.Extra = max(s.Checkpoints.Extra, peak-before)
			}
		}
		if iter%100 == 0 {
			r := math.Sqrt(s.rms.DataRO()[0] / float64(s.cells.GlobalSize()))
			rms = append(rms, r)
			if op2.Rank() == 0 {
				fmt.Fprintf(out, " %d  %10.5e\n", iter, r)
			}
		}
	}
	if err := op2.Wait(); err != nil {
		return nil, 0, err
	}
	return rms, time.Since(start), nil
}

// resume restores the checkpoint at CheckpointPath when the file exists
// and returns the first iteration to run.
func (s *Solver) resume(niter int) (int, error) {
	if s.CheckpointPath == "" {
		return 1, nil
	}
	if _, err := os.Stat(s.CheckpointPath); errors.Is(err, os.ErrNotExist) {
		return 1, nil
	}
	t := time.Now()
	state, err := op2.Restore(s.CheckpointPath)
	if err != nil {
		return 0, err
	}
	s.Checkpoints.Restore, s.Checkpoints.Restored = time.Since(t), true
	done, err := strconv.Atoi(string(state[iterKey]))
	if err != nil || done < 0 {
		return 0, fmt.Errorf("airfoil: checkpoint %s holds no iteration (%q): was it written by airfoil?", s.CheckpointPath, state[iterKey])
	}
	s.Checkpoints.Done = done
	if done > niter {
		return 0, fmt.Errorf("airfoil: checkpoint %s is at iteration %d, past the %d iterations asked for", s.CheckpointPath, done, niter)
	}
	return done + 1, nil
}

// Loops names Airfoil's five loops (their kernels), in the order an
// iteration first runs them; RunLoop runs one of them.
var Loops = []string{"save_soln", "adt_calc", "res_calc", "bres_calc", "update"}

// RunLoop runs the named loop, one of Loops, n times in a row with the
// arguments Iterate passes it, and waits for the last call: a benchmark
// of one loop alone, whose data stay in cache when the mesh is small
// (cmd/op2bench's compute floor). Repeating a loop changes the solution
// as no iteration does (res_calc and bres_calc keep adding to the
// residual, update to the rms), but keeps it finite.
func (s *Solver) RunLoop(name string, n int) error {
	if n < 0 {
		return fmt.Errorf("airfoil: loop %s %d times: the count must not be negative", name, n)
	}
	var loop func() error
	switch name {
	case "save_soln":
		loop = s.saveSolnLoop
	case "adt_calc":
		loop = s.adtCalcLoop
	case "res_calc":
		loop = s.resCalcLoop
	case "bres_calc":
		loop = s.bresCalcLoop
	case "update":
		loop = s.updateLoop
	default:
		return fmt.Errorf("airfoil: unknown loop %q (one of %s)", name, strings.Join(Loops, ", "))
	}
	for i := 0; i < n; i++ {
		if err := loop(); err != nil {
			return err
		}
	}
	return op2.Wait()
}

// saveSolnLoop copies q to qold.
func (s *Solver) saveSolnLoop() error {
	return op2.ParLoop(s.saveSoln, s.cells, s.q.Arg(op2.Read), s.qold.Arg(op2.Write))
}

// adtCalcLoop computes each cell's area/timestep.
func (s *Solver) adtCalcLoop() error {
	return op2.ParLoop(s.adtCalc, s.cells,
		s.x.ArgMap(op2.Read, s.pcell, 0), s.x.ArgMap(op2.Read, s.pcell, 1),
		s.x.ArgMap(op2.Read, s.pcell, 2), s.x.ArgMap(op2.Read, s.pcell, 3),
		s.q.Arg(op2.Read), s.adt.Arg(op2.Write))
}

// resCalcLoop adds each interior edge's flux to its two cells' residuals.
func (s *Solver) resCalcLoop() error {
	return op2.ParLoop(s.resCalc, s.edges,
		s.x.ArgMap(op2.Read, s.pedge, 0), s.x.ArgMap(op2.Read, s.pedge, 1),
		s.q.ArgMap(op2.Read, s.pecell, 0), s.q.ArgMap(op2.Read, s.pecell, 1),
		s.adt.ArgMap(op2.Read, s.pecell, 0), s.adt.ArgMap(op2.Read, s.pecell, 1),
		s.res.ArgMap(op2.Inc, s.pecell, 0), s.res.ArgMap(op2.Inc, s.pecell, 1))
}

// bresCalcLoop adds each boundary edge's flux to its cell's residual.
func (s *Solver) bresCalcLoop() error {
	return op2.ParLoop(s.bresCalc, s.bedges,
		s.x.ArgMap(op2.Read, s.pbedge, 0), s.x.ArgMap(op2.Read, s.pbedge, 1),
		s.q.ArgMap(op2.Read, s.pbecell, 0), s.adt.ArgMap(op2.Read, s.pbecell, 0),
		s.res.ArgMap(op2.Inc, s.pbecell, 0), s.bound.Arg(op2.Read))
}

// updateLoop updates q from qold and the residual, zeroes the residual
// and adds the squared change to rms.
func (s *Solver) updateLoop() error {
	return op2.ParLoop(s.update, s.cells,
		s.qold.Arg(op2.Read), s.q.Arg(op2.Write), s.res.Arg(op2.RW),
		s.adt.Arg(op2.Read), s.rms.Arg(op2.Inc))
}

// Q returns the solution (4 values per cell). In a distributed run rank 0
// gets every cell's values in the mesh's numbering and the other ranks nil;
// every rank must call it.
func (s *Solver) Q() ([]float64, error) { return s.q.Gather() }

// Cells is the number of cells.
func (s *Solver) Cells() int { return s.cells.GlobalSize() }

// OwnedCells is the number of cells this rank owns.
func (s *Solver) OwnedCells() int { return s.cells.Size() }

// WriteVTK writes the mesh and the solution to path as a VTK XML
// UnstructuredGrid (.vtu, base64 binary), for ParaView or cmd/op2render:
// the cells (quads) carry q (4 components: density, x and y momentum,
// energy), the fields derived from it, pressure p = (γ−1)(q3 −
// ½(q1²+q2²)/q0) and Mach number √(u²+v²)/c with c = √(γp/q0), and each
// cell's number in the mesh's numbering (vtk.DeclaredNumberArray); the
// points carry nothing. In a distributed run it is collective and writes
// a parallel file instead (vtk.WriteParallel: path with .pvtu for .vtu,
// and one piece per rank holding the rank's cells), so that no rank
// gathers the mesh.
func (s *Solver) WriteVTK(path string) error {
	w, err := vtk.NewWriter(s.x, s.pcell)
	if err != nil {
		return err
	}
	w.DeclaredNumbers = true
	if err := vtk.CellDat(w, s.q); err != nil {
		return err
	}
	g, err := w.Piece()
	if err != nil {
		return err
	}
	a := g.CellArray(s.q.Name())
	a.Name = "q"
	q := a.Values.([]float64)
	n := len(q) / 4
	p, mach := make([]float64, n), make([]float64, n)
	for i := 0; i < n; i++ {
		p[i], mach[i] = Derived(q[4*i : 4*i+4])
	}
	g.CellData = append(g.CellData,
		vtk.Array{Name: "pressure", Components: 1, Values: p},
		vtk.Array{Name: "mach", Components: 1, Values: mach})
	return vtk.WriteParallel(g, path, vtk.Binary)
}

// Derived returns the pressure and the Mach number of one cell's state q
// (density, x and y momentum, energy), with the solver's γ.
func Derived(q []float64) (p, mach float64) {
	r := q[0]
	u, v := q[1]/r, q[2]/r
	p = gm1Value * (q[3] - 0.5*r*(u*u+v*v))
	c := math.Sqrt(gamValue * p / r)
	return p, math.Sqrt(u*u+v*v) / c
}
