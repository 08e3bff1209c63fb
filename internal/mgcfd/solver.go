package mgcfd

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
)

// The flow constants: MG-CFD's γ = 1.4 (in the kernels), far-field Mach
// number 1.2 at zero angle of attack, density 1.4 and pressure 1, and its
// dissipation coefficient, 0.2 in single precision.
const (
	ffMach     = 1.2
	ffDensity  = 1.4
	ffPressure = 1.0
	gamma      = 1.4
)

var smoothing = float64(float32(0.2))

// farField returns the far-field variables and their fluxes (the x, y and
// z momentum rows and the energy row, each along x, y and z), computed as
// MG-CFD computes them.
func farField() (ff [5]float64, flux [12]float64) {
	c := math.Sqrt(gamma * ffPressure / ffDensity)
	speed := ffMach * c
	u := [3]float64{speed * math.Cos(0), speed * math.Sin(0), 0}
	ff[0] = ffDensity
	for i := range u {
		ff[1+i] = ffDensity * u[i]
	}
	ff[4] = ffDensity*(0.5*(speed*speed)) + ffPressure/(gamma-1.0)
	m := ff[1:4]
	for i := 0; i < 3; i++ {
		for d := 0; d < 3; d++ {
			lo, hi := min(i, d), max(i, d)
			flux[3*i+d] = u[lo] * m[hi]
			if i == d {
				flux[3*i+d] += ffPressure
			}
		}
		flux[9+i] = u[i] * (ff[4] + ffPressure)
	}
	return ff, flux
}

// level is one multigrid level declared to GoOP2.
type level struct {
	nodes, edges, bnd *op2.Set
	edgeNodes, bndMap *op2.Map
	mg                *op2.Map // to the next coarser level's nodes; nil on the coarsest
	coords            *op2.Dat[float64]
	ewt, bwt          *op2.Dat[float64]
	groups            *op2.Dat[int32]
	vars, old, res    *op2.Dat[float64]
	fluxes            *op2.Dat[float64]
	vol, sf           *op2.Dat[float64]
	count             *op2.Dat[int32] // restriction counts; nil on the finest
}

// Solver holds MG-CFD's problem declared to GoOP2: per level the node,
// edge and boundary-node sets, their maps and data, and the constants.
type Solver struct {
	levels []level
	minDt  *op2.Global[float64]
	stage  *op2.Global[int32]
	rms    *op2.Global[float64]
	bad    *op2.Global[int32]
	consts []*op2.Const[float64]
	k      map[string]*op2.Kernel
}

// New declares mesh m (checked with Mesh.Check) on the current
// configuration's backend and runs MG-CFD's set-up loops: every level's
// variables set to the far field, fluxes zeroed, the nodes' dual volumes
// computed from the edges (which turns each edge's weight into its face
// area along the edge over its length) and the weights damped by 10⁻⁷.
// Close withdraws the constants so that another Solver can declare them.
func New(m *Mesh) (*Solver, error) {
	return newSolver(m, 0, 1, nil)
}

// NewDistributed is New on the MPI ranks: every rank passes the whole
// mesh (Generate and ReadHDF5 give the same on every rank), declares its
// block of every set (hdf5.Block's split, the maps in the global
// numbering), and the levels are partitioned together with the named
// partitioner — "rcb" (recursive coordinate bisection of the finest
// level's nodes, spread through the maps to the edges, the boundary
// nodes and, by the fine-to-coarse maps, the coarser levels) or "block"
// (each rank keeps its blocks); "" is rcb — before the set-up loops. It
// is collective: every rank calls it. Without MPI, or on one rank, it is
// New.
func NewDistributed(m *Mesh, partitioner string) (*Solver, *op2.PartitionInfo, error) {
	if partitioner != "" && partitioner != "rcb" && partitioner != "block" {
		return nil, nil, fmt.Errorf("mgcfd: unknown partitioner %q (rcb or block)", partitioner)
	}
	var info *op2.PartitionInfo
	part := func(s *Solver) error {
		p := op2.RCBPartitioner(s.levels[0].coords)
		if partitioner == "block" {
			p = op2.BlockPartitioner()
		}
		var err error
		info, err = op2.Partition(p)
		return err
	}
	s, err := newSolver(m, op2.Rank(), op2.Ranks(), part)
	if err != nil {
		return nil, nil, err
	}
	return s, info, nil
}

// kernelSources are the kernels' sources by name (tests run other forms
// of them).
var kernelSources = map[string]string{
	"mg_flux_edge": fluxEdgeSrc, "mg_flux_bnd": fluxBndSrc, "mg_init_vars": initVarsSrc,
	"mg_zero5": zero5Src, "mg_zero1": zero1Src, "mg_volumes": volumesSrc, "mg_damp": dampSrc,
	"mg_copy_vars": copyVarsSrc, "mg_calc_dt": calcDtSrc, "mg_min_dt": minDtSrc,
	"mg_step_factor": stepFactorSrc, "mg_time_step": timeStepSrc, "mg_residual": residualSrc,
	"mg_rms": rmsSrc, "mg_bad_vals": badValsSrc, "mg_restrict_zero": restrictZeroSrc,
	"mg_restrict_sum": restrictSumSrc, "mg_restrict_mean": restrictMeanSrc, "mg_prolong": prolongSrc,
}

// newSolver declares block rank of ranks of every set of m, calls
// partition (when not nil) and runs the set-up loops.
func newSolver(m *Mesh, rank, ranks int, partition func(*Solver) error) (*Solver, error) {
	if err := m.Check(); err != nil {
		return nil, err
	}
	s := &Solver{k: map[string]*op2.Kernel{}}
	for name, src := range kernelSources {
		s.k[name] = op2.NewKernel(src, name)
	}
	err := s.declare(blockOf(m, rank, ranks))
	if err == nil && partition != nil {
		err = partition(s)
	}
	if err == nil {
		err = s.setup()
	}
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// blockOf is rank's block (of ranks) of every set of m, its maps still
// in the global numbering; m itself on one rank.
func blockOf(m *Mesh, rank, ranks int) *Mesh {
	if ranks == 1 {
		return m
	}
	b := &Mesh{Levels: make([]Level, len(m.Levels))}
	for l := range m.Levels {
		lv, out := &m.Levels[l], &b.Levels[l]
		ns, nc := hdf5.Block(lv.NNodes, rank, ranks)
		es, ec := hdf5.Block(lv.NEdges, rank, ranks)
		bs, bc := hdf5.Block(lv.NBnd, rank, ranks)
		out.NNodes, out.NEdges, out.NBnd = nc, ec, bc
		out.Coords = lv.Coords[3*ns : 3*(ns+nc)]
		out.EdgeNodes = lv.EdgeNodes[2*es : 2*(es+ec)]
		out.EdgeWeights = lv.EdgeWeights[3*es : 3*(es+ec)]
		out.BndNodes = lv.BndNodes[bs : bs+bc]
		out.BndGroups = lv.BndGroups[bs : bs+bc]
		out.BndWeights = lv.BndWeights[3*bs : 3*(bs+bc)]
		if lv.MGNodes != nil {
			out.MGNodes = lv.MGNodes[ns : ns+nc]
		}
	}
	return b
}

func (s *Solver) declare(m *Mesh) error {
	ff, flux := farField()
	var err error
	cst := func(v []float64, name string) {
		if err != nil {
			return
		}
		var c *op2.Const[float64]
		if c, err = op2.NewConst(len(v), v, name); err == nil {
			s.consts = append(s.consts, c)
		}
	}
	cst([]float64{smoothing}, "mg_smooth")
	cst(ff[:], "mg_ff")
	cst(flux[:], "mg_ff_flux")
	if err != nil {
		return err
	}
	if s.minDt, err = op2.NewGlobal[float64](1, nil, "min_dt"); err != nil {
		return err
	}
	if s.stage, err = op2.NewGlobal[int32](1, nil, "rk_stage"); err != nil {
		return err
	}
	if s.rms, err = op2.NewGlobal[float64](1, nil, "rms"); err != nil {
		return err
	}
	if s.bad, err = op2.NewGlobal[int32](1, nil, "bad_vals"); err != nil {
		return err
	}
	s.levels = make([]level, len(m.Levels))
	for l := range m.Levels {
		if err := s.declareLevel(l, &m.Levels[l]); err != nil {
			return err
		}
	}
	for l := range m.Levels[:len(m.Levels)-1] {
		fine, coarse := &s.levels[l], &s.levels[l+1]
		if fine.mg, err = op2.NewMap(fine.nodes, coarse.nodes, 1, m.Levels[l].MGNodes, fmt.Sprintf("node_to_mg_node_L%d", l)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Solver) declareLevel(l int, ml *Level) error {
	lv := &s.levels[l]
	var err error
	name := func(n string) string { return fmt.Sprintf("%s_L%d", n, l) }
	set := func(n int, nm string) *op2.Set {
		if err != nil {
			return nil
		}
		var st *op2.Set
		st, err = op2.NewSet(n, name(nm))
		return st
	}
	lv.nodes = set(ml.NNodes, "nodes")
	lv.edges = set(ml.NEdges, "edges")
	lv.bnd = set(ml.NBnd, "bnd_nodes")
	mp := func(from, to *op2.Set, arity int, v []int32, nm string) *op2.Map {
		if err != nil {
			return nil
		}
		var mm *op2.Map
		mm, err = op2.NewMap(from, to, arity, v, name(nm))
		return mm
	}
	lv.edgeNodes = mp(lv.edges, lv.nodes, 2, ml.EdgeNodes, "edge_to_nodes")
	lv.bndMap = mp(lv.bnd, lv.nodes, 1, ml.BndNodes, "bnd_node_to_node")
	dat := func(set *op2.Set, dim int, v []float64, nm string) *op2.Dat[float64] {
		if err != nil {
			return nil
		}
		var d *op2.Dat[float64]
		d, err = op2.NewDat(set, dim, v, name(nm))
		return d
	}
	// NewDat copies its values, so the mesh's tables stay as they are.
	lv.coords = dat(lv.nodes, 3, ml.Coords, "coords")
	lv.ewt = dat(lv.edges, 3, ml.EdgeWeights, "edge_weights")
	lv.bwt = dat(lv.bnd, 3, ml.BndWeights, "bnd_weights")
	lv.vars = dat(lv.nodes, 5, nil, "variables")
	lv.old = dat(lv.nodes, 5, nil, "old_variables")
	lv.res = dat(lv.nodes, 5, nil, "residuals")
	lv.fluxes = dat(lv.nodes, 5, nil, "fluxes")
	lv.vol = dat(lv.nodes, 1, nil, "volumes")
	lv.sf = dat(lv.nodes, 1, nil, "step_factors")
	if err != nil {
		return err
	}
	if lv.groups, err = op2.NewDat(lv.bnd, 1, ml.BndGroups, name("bnd_groups")); err != nil {
		return err
	}
	if l > 0 {
		if lv.count, err = op2.NewDat[int32](lv.nodes, 1, nil, name("up_count")); err != nil {
			return err
		}
	}
	return nil
}

// setup runs the loops before the first cycle.
func (s *Solver) setup() error {
	for _, lv := range s.levels {
		for _, step := range []func() error{
			func() error { return op2.ParLoop(s.k["mg_init_vars"], lv.nodes, lv.vars.Arg(op2.Write)) },
			func() error { return op2.ParLoop(s.k["mg_zero5"], lv.nodes, lv.fluxes.Arg(op2.Write)) },
			func() error { return op2.ParLoop(s.k["mg_zero1"], lv.nodes, lv.vol.Arg(op2.Write)) },
			func() error {
				return op2.ParLoop(s.k["mg_volumes"], lv.edges,
					lv.coords.ArgMap(op2.Read, lv.edgeNodes, 0), lv.coords.ArgMap(op2.Read, lv.edgeNodes, 1),
					lv.ewt.Arg(op2.RW),
					lv.vol.ArgMap(op2.Inc, lv.edgeNodes, 0), lv.vol.ArgMap(op2.Inc, lv.edgeNodes, 1))
			},
		} {
			if err := step(); err != nil {
				return err
			}
		}
	}
	for _, lv := range s.levels {
		if err := op2.ParLoop(s.k["mg_damp"], lv.edges, lv.ewt.Arg(op2.RW)); err != nil {
			return err
		}
		if err := op2.ParLoop(s.k["mg_damp"], lv.bnd, lv.bwt.Arg(op2.RW)); err != nil {
			return err
		}
	}
	return nil
}

// Close withdraws the constants so that another Solver can declare them.
func (s *Solver) Close() {
	for _, c := range s.consts {
		c.Remove()
	}
	s.consts = nil
}

// Levels is the number of multigrid levels.
func (s *Solver) Levels() int { return len(s.levels) }

// Run runs cycles multigrid V-cycles as MG-CFD does: on each level, going
// down to the coarsest and back, a smoothing step (the variables saved,
// the local time steps and their minimum, then three Runge–Kutta stages,
// each the edge and boundary fluxes and the update, and the residual: the
// change of the variables), then, going down, the variables restricted to
// the next coarser level (the mean of its fine nodes) or, coming back up,
// the residual of the coarser level prolonged onto the finer one. Each
// smoothing step on the finest level starts a cycle and computes the rms of
// its residual, √(Σ residual² / nodes); a cycle's line "Performing MG cycle
// i / n" (MG-CFD's) is written to out when out is not nil. It returns the
// rms of every cycle and the wall time of the cycles. A non-finite
// variable on the finest level, or a negative time step, stops the run
// with an error, as the original aborts.
func (s *Solver) Run(cycles int, out io.Writer) (rms []float64, elapsed time.Duration, err error) {
	if cycles < 0 {
		return nil, 0, fmt.Errorf("mgcfd: %d cycles: the number of cycles must not be negative", cycles)
	}
	start := time.Now()
	l, down := 0, false
	for i := 0; i < cycles; {
		if l == 0 && out != nil && op2.Rank() == 0 {
			fmt.Fprintf(out, "Performing MG cycle %d / %d\n", i+1, cycles)
		}
		r, err := s.smooth(l)
		if err != nil {
			return nil, 0, err
		}
		if l == 0 {
			rms = append(rms, r)
		}
		switch {
		case len(s.levels) == 1:
			i++
		case !down:
			l++
			if err := s.restrict(l); err != nil {
				return nil, 0, err
			}
			down = l == len(s.levels)-1
		default:
			l--
			if err := s.prolong(l); err != nil {
				return nil, 0, err
			}
			if l == 0 {
				down = false
				i++
			}
		}
	}
	if err := op2.Wait(); err != nil {
		return nil, 0, err
	}
	return rms, time.Since(start), nil
}

// smooth runs one smoothing step on level l and returns, on the finest
// level, the rms of its residual.
func (s *Solver) smooth(l int) (float64, error) {
	lv := &s.levels[l]
	k := s.k
	if err := op2.ParLoop(k["mg_copy_vars"], lv.nodes, lv.vars.Arg(op2.Read), lv.old.Arg(op2.Write)); err != nil {
		return 0, err
	}
	if err := op2.ParLoop(k["mg_calc_dt"], lv.nodes, lv.vars.Arg(op2.Read), lv.vol.Arg(op2.Read), lv.sf.Arg(op2.Write)); err != nil {
		return 0, err
	}
	s.minDt.SetValue(math.MaxFloat64)
	if err := op2.ParLoop(k["mg_min_dt"], lv.nodes, lv.sf.Arg(op2.Read), s.minDt.Arg(op2.Min)); err != nil {
		return 0, err
	}
	if d := s.minDt.DataRO()[0]; d < 0 {
		return 0, fmt.Errorf("mgcfd: level %d: the minimum time step is %.5e, negative", l, d)
	}
	if err := op2.ParLoop(k["mg_step_factor"], lv.nodes, lv.vol.Arg(op2.Read), s.minDt.Arg(op2.Read), lv.sf.Arg(op2.Write)); err != nil {
		return 0, err
	}
	for stage := int32(0); stage < 3; stage++ {
		if err := op2.ParLoop(k["mg_flux_edge"], lv.edges,
			lv.vars.ArgMap(op2.Read, lv.edgeNodes, 0), lv.vars.ArgMap(op2.Read, lv.edgeNodes, 1),
			lv.ewt.Arg(op2.Read),
			lv.fluxes.ArgMap(op2.Inc, lv.edgeNodes, 0), lv.fluxes.ArgMap(op2.Inc, lv.edgeNodes, 1)); err != nil {
			return 0, err
		}
		if err := op2.ParLoop(k["mg_flux_bnd"], lv.bnd,
			lv.groups.Arg(op2.Read), lv.bwt.Arg(op2.Read),
			lv.vars.ArgMap(op2.Read, lv.bndMap, 0), lv.fluxes.ArgMap(op2.Inc, lv.bndMap, 0)); err != nil {
			return 0, err
		}
		s.stage.SetValue(stage)
		if err := op2.ParLoop(k["mg_time_step"], lv.nodes,
			s.stage.Arg(op2.Read), lv.sf.Arg(op2.Read), lv.fluxes.Arg(op2.RW),
			lv.old.Arg(op2.Read), lv.vars.Arg(op2.Write)); err != nil {
			return 0, err
		}
	}
	if err := op2.ParLoop(k["mg_residual"], lv.nodes, lv.old.Arg(op2.Read), lv.vars.Arg(op2.Read), lv.res.Arg(op2.Write)); err != nil {
		return 0, err
	}
	if l != 0 {
		return 0, nil
	}
	s.rms.SetValue(0)
	if err := op2.ParLoop(k["mg_rms"], lv.nodes, lv.res.Arg(op2.Read), s.rms.Arg(op2.Inc)); err != nil {
		return 0, err
	}
	r := math.Sqrt(s.rms.DataRO()[0] / float64(lv.nodes.GlobalSize()))
	s.bad.SetValue(0)
	if err := op2.ParLoop(k["mg_bad_vals"], lv.nodes, lv.vars.Arg(op2.Read), s.bad.Arg(op2.Inc)); err != nil {
		return 0, err
	}
	if n := s.bad.DataRO()[0]; n > 0 {
		return 0, fmt.Errorf("mgcfd: %d variables on the finest level are not finite", n)
	}
	return r, nil
}

// restrict sets level l's variables to the mean of level l−1's over the
// fine nodes that map to each node.
func (s *Solver) restrict(l int) error {
	fine, lv := &s.levels[l-1], &s.levels[l]
	if err := op2.ParLoop(s.k["mg_restrict_zero"], fine.nodes,
		lv.vars.ArgMap(op2.Write, fine.mg, 0), lv.count.ArgMap(op2.Write, fine.mg, 0)); err != nil {
		return err
	}
	if err := op2.ParLoop(s.k["mg_restrict_sum"], fine.nodes, fine.vars.Arg(op2.Read),
		lv.vars.ArgMap(op2.Inc, fine.mg, 0), lv.count.ArgMap(op2.Inc, fine.mg, 0)); err != nil {
		return err
	}
	return op2.ParLoop(s.k["mg_restrict_mean"], lv.nodes, lv.vars.Arg(op2.RW), lv.count.Arg(op2.Read))
}

// prolong corrects level l's variables with level l+1's residual.
func (s *Solver) prolong(l int) error {
	lv, coarse := &s.levels[l], &s.levels[l+1]
	return op2.ParLoop(s.k["mg_prolong"], lv.nodes,
		lv.vars.Arg(op2.Inc), lv.res.Arg(op2.Read), lv.coords.Arg(op2.Read),
		coarse.res.ArgMap(op2.Read, lv.mg, 0), coarse.coords.ArgMap(op2.Read, lv.mg, 0))
}

// Variables returns level l's variables (5 per node: density, x, y and z
// momentum, density × energy) in the mesh's numbering.
func (s *Solver) Variables(l int) ([]float64, error) {
	if l < 0 || l >= len(s.levels) {
		return nil, fmt.Errorf("mgcfd: level %d: the solver has levels 0 to %d", l, len(s.levels)-1)
	}
	return s.levels[l].vars.Gather()
}

// Loops names the kernels of the cycle, in the order a cycle first runs
// them.
var Loops = []string{"mg_copy_vars", "mg_calc_dt", "mg_min_dt", "mg_step_factor", "mg_flux_edge", "mg_flux_bnd",
	"mg_time_step", "mg_residual", "mg_rms", "mg_bad_vals", "mg_restrict_zero", "mg_restrict_sum",
	"mg_restrict_mean", "mg_prolong"}
