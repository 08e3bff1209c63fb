// Command advect moves a scalar through a 2-D or 3-D unstructured mesh
// with a cell-centred, first-order upwind finite-volume scheme: the
// example of a finite-volume code on a Gmsh mesh (package
// mesh/unstructured), on every backend and any number of MPI ranks.
//
// Usage:
//
//	advect [-mesh FILE.msh|FILE.h5 | -n 16] [-steps 200] [-cfl 0.5] [-every 50] [-backend B] [-vtk out.vtu]
//
// The velocity is the vortex u = (sin πx cos πy, −cos πx sin πy, 0), which
// is tangent to the walls of the unit square and cube; the boundary facets
// are walls (no flux), so the total Σ V·q over the cells is conserved to
// round-off whatever the mesh. The flux through a facet is that of u =
// curl(0, 0, ψ), ψ = sin πx sin πy / π, by Stokes' theorem: in 2-D the
// difference of ψ between the edge's ends, in 3-D the circulation of
// (0, 0, ψ) around the face (ψ at each edge's midpoint times its rise in
// z). Each edge's term enters the two facets sharing it with opposite
// signs, so the fluxes out of every cell add up to zero: the discrete
// velocity is divergence-free, and upwinding keeps q between its initial
// bounds. Each step computes the flux through every
// interior facet from the upwind cell (a loop over each interior facet
// set, incrementing both cells) and updates the cells (a loop that also
// adds up the total, the minimum and the maximum). The time step is the
// CFL number times the smallest V / Σ outflow over the cells. q starts at
// 1 in a ball of radius 0.2 around (0.5, 0.75, 0.5) and 0 elsewhere, and
// stays in [0, 1].
//
// The mesh may mix kinds of cell (a boundary layer of prisms and
// hexahedra under tetrahedra, with pyramids between them; quadrilaterals
// beside triangles): the scheme's loops run over the cells and the
// facets, one set per facet kind, whatever the cells' kinds (and -vtk
// writes a cell type per cell).
//
// Without -mesh the mesh is the unit cube cut into n³ cubes of six
// tetrahedra. Every -every steps (and at the end) rank 0 prints the step,
// time, total, minimum and maximum, and at the end the relative change of
// the total (the absolute one when the total starts at 0: on a mesh so
// coarse that no cell's centre lies in the ball, q starts at 0
// everywhere). -vtk writes q on the cells for ParaView: a .vtu file, or
// under MPI a .pvtu file with one piece per rank.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"time"

	op2 "github.com/goop2/op2"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/mesh/unstructured"
	"github.com/goop2/op2/vtk"
)

type options struct {
	mesh    string
	n       int
	steps   int
	every   int
	cfl     float64
	backend string
	threads int
	vtk     string
}

func main() {
	regfile.RemoveOnSignal() // ^C leaves no half-written output
	var o options
	defineFlags(flag.CommandLine, &o)
	flag.Parse()
	if err := regfile.EmptyOutput(flag.CommandLine, "vtk"); err != nil {
		fmt.Fprintln(os.Stderr, "advect:", err)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "advect: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := checkMeshFlags(flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, "advect:", err)
		os.Exit(2)
	}
	stdout := &regfile.ErrWriter{W: os.Stdout} // its error fails the command
	var out io.Writer = stdout
	if op2.Rank() != 0 {
		out = io.Discard // under MPI rank 0 prints
	}
	if _, err := run(o, out); err != nil {
		if op2.Ranks() > 1 {
			op2.Abort(fmt.Errorf("advect: %w", err)) // stops every rank
		}
		fmt.Fprintln(os.Stderr, "advect:", err)
		os.Exit(1)
	}
	if err := op2.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "advect:", err)
		os.Exit(1)
	}
	if err := stdout.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "advect: writing standard output:", err)
		os.Exit(1)
	}
}

// defineFlags defines the command's flags on fs, to be parsed into o.
func defineFlags(fs *flag.FlagSet, o *options) {
	fs.StringVar(&o.mesh, "mesh", "", "read the mesh from `FILE`: a Gmsh .msh file, or the .h5 file that \"op2mesh convert FILE.msh FILE.h5\" makes of one (default: the unit cube cut into n³ cubes of six tetrahedra)")
	fs.IntVar(&o.n, "n", 16, "without -mesh: cubes along each side of the unit cube")
	fs.IntVar(&o.steps, "steps", 200, "time steps")
	fs.IntVar(&o.every, "every", 50, "print every this many steps")
	fs.Float64Var(&o.cfl, "cfl", 0.5, "CFL number (at most 1)")
	fs.StringVar(&o.backend, "backend", "", "backend: "+fmt.Sprint(op2.Backends())+" (default $OP2_BACKEND, else sequential)")
	fs.IntVar(&o.threads, "threads", 0, "OpenMP threads (default $OMP_NUM_THREADS, else all CPUs, shared among the MPI ranks on this machine)")
	fs.StringVar(&o.vtk, "vtk", "", "write q on the cells at the end as a VTK .vtu file (under MPI a .pvtu file and one piece per rank)")
}

// checkMeshFlags refuses -n given with -mesh: it sizes the generated
// mesh, which -mesh replaces, and would be ignored.
func checkMeshFlags(fs *flag.FlagSet) error { return regfile.GeneratedOnly(fs, "mesh", "n") }

// kernels are the scheme's loops; D is the mesh's dimension.
const kernels = `
/* The stream function of the vortex: u = curl(0, 0, psi). */
static double op2a_psi(double x, double y) { return sin(M_PI * x) * sin(M_PI * y) / M_PI; }

/* The flux of u out of a facet's first cell, by Stokes' theorem: an edge
   from x[0] to x[1] (2-D), or the circulation of (0, 0, psi) around a
   face, its nodes counter-clockwise seen from outside. */
void face_speed2(const double *x[2], double *un) {
  *un = op2a_psi(x[1][0], x[1][1]) - op2a_psi(x[0][0], x[0][1]);
}
void face_speed3(const double *x[3], double *un) {
  double f = 0.0;
  for (int i = 0; i < 3; i++) {
    int j = (i + 1) % 3;
    f += op2a_psi(0.5 * (x[i][0] + x[j][0]), 0.5 * (x[i][1] + x[j][1])) * (x[j][2] - x[i][2]);
  }
  *un = f;
}
void face_speed4(const double *x[4], double *un) {
  double f = 0.0;
  for (int i = 0; i < 4; i++) {
    int j = (i + 1) % 4;
    f += op2a_psi(0.5 * (x[i][0] + x[j][0]), 0.5 * (x[i][1] + x[j][1])) * (x[j][2] - x[i][2]);
  }
  *un = f;
}

/* Each cell's outflow, Σ over its facets of max(u·a, 0). */
void outflow(const double *un, double *out0, double *out1) {
  if (*un > 0) *out0 += *un; else *out1 -= *un;
}

void cell_dt(const double *vol, const double *out, double *dt) {
  if (*out > 0) *dt = fmin(*dt, *vol / *out);
}

void initial(const double *c, double *q) {
  double r2 = 0.0, o[3] = {0.5, 0.75, 0.5};
  for (int k = 0; k < D; k++) r2 += (c[k] - o[k]) * (c[k] - o[k]);
  *q = r2 < 0.04 ? 1.0 : 0.0;
}

/* The upwind flux through an interior facet, out of the first cell into
   the second. */
void flux(const double *un, const double *q0, const double *q1, double *r0, double *r1) {
  double f = *un > 0 ? *un * *q0 : *un * *q1;
  *r0 -= f;
  *r1 += f;
}

void update(const double *dt, const double *vol, double *q, double *r, double *total, double *lo, double *hi) {
  *q += *dt * *r / *vol;
  *r = 0.0;
  *total += *vol * *q;
  *lo = fmin(*lo, *q);
  *hi = fmax(*hi, *q);
}

void mass(const double *vol, const double *q, double *total) { *total += *vol * *q; }
`

// result is what a run ends with.
type result struct {
	mesh         *unstructured.Mesh
	q            *op2.Dat[float64]
	un           []*op2.Dat[float64] // per interior facet set: the flux out of the first cell
	outflow      *op2.Dat[float64]   // per cell
	total0, last float64
	lo, hi       float64
}

func run(o options, out io.Writer) (*result, error) {
	if !(o.cfl > 0 && o.cfl <= 1) { // NaN too
		return nil, fmt.Errorf("-cfl %g: want a CFL number in (0, 1]", o.cfl)
	}
	if o.steps < 0 || o.every < 1 {
		return nil, fmt.Errorf("-steps %d -every %d: want steps ≥ 0 and every ≥ 1", o.steps, o.every)
	}
	if err := regfile.CheckOutputs([]regfile.Named{{Flag: "-mesh", Path: o.mesh}}, []regfile.Named{{Flag: "-vtk", Path: o.vtk}}); err != nil {
		return nil, err
	}
	if err := op2.Configure(op2.Config{Backend: o.backend, Threads: o.threads}); err != nil {
		return nil, err
	}
	var m *unstructured.Mesh
	var err error
	if o.mesh != "" {
		m, err = unstructured.Load(o.mesh, unstructured.Options{})
	} else {
		if o.n < 1 || o.n > unstructured.MaxCube {
			return nil, fmt.Errorf("-n %d: want 1 to %d (6n³ tetrahedra, numbered in int32)", o.n, unstructured.MaxCube)
		}
		m, err = unstructured.Declare(unstructured.Cube(o.n), unstructured.Options{})
	}
	if err != nil {
		return nil, err
	}
	geo, err := m.Geometry()
	if err != nil {
		return nil, err
	}
	src := fmt.Sprintf("#define D %d\n%s", m.Dim, kernels)
	kernels := map[string]*op2.Kernel{}
	for _, name := range []string{"face_speed2", "face_speed3", "face_speed4", "outflow", "cell_dt", "initial", "mass", "flux", "update"} {
		kernels[name] = op2.NewKernel(src, name)
	}
	res := &result{mesh: m}
	dat := func(set *op2.Set, dim int, name string) *op2.Dat[float64] {
		d, e := op2.NewDat[float64](set, dim, nil, name)
		if e != nil && err == nil {
			err = e
		}
		return d
	}
	res.q = dat(m.Cells, 1, "q")
	r, outf := dat(m.Cells, 1, "r"), dat(m.Cells, 1, "outflow")
	un := make([]*op2.Dat[float64], len(m.Interior))
	for i, f := range m.Interior {
		un[i] = dat(f.Set, 1, f.Set.Name()+"_un")
	}
	if err != nil {
		return nil, err
	}
	res.un, res.outflow = un, outf
	loop := func(k string, set op2.IterationSet, args ...op2.Arg) {
		if err == nil {
			if e := op2.ParLoop(kernels[k], set, args...); e != nil {
				err = fmt.Errorf("loop %s: %w", k, e)
			}
		}
	}
	global := func(v float64, name string) *op2.Global[float64] {
		g, e := op2.NewGlobal[float64](1, []float64{v}, name)
		if e != nil && err == nil {
			err = e
		}
		return g
	}
	dt, total, lo, hi := global(math.Inf(1), "dt"), global(0, "total"), global(math.Inf(1), "min"), global(math.Inf(-1), "max")
	if err != nil {
		return nil, err
	}
	for i, f := range m.Interior {
		loop(fmt.Sprintf("face_speed%d", f.Kind.Nodes()), f.Set, m.X.ArgVec(op2.Read, f.Nodes), un[i].Arg(op2.Write))
		loop("outflow", f.Set, un[i].Arg(op2.Read), outf.ArgMap(op2.Inc, f.Cells, 0), outf.ArgMap(op2.Inc, f.Cells, 1))
	}
	loop("cell_dt", m.Cells, geo.CellVolume.Arg(op2.Read), outf.Arg(op2.Read), dt.Arg(op2.Min))
	loop("initial", m.Cells, geo.CellCentre.Arg(op2.Read), res.q.Arg(op2.Write))
	loop("mass", m.Cells, geo.CellVolume.Arg(op2.Read), res.q.Arg(op2.Read), total.Arg(op2.Inc))
	if err != nil {
		return nil, err
	}
	if math.IsInf(dt.Value(), 1) {
		return nil, errors.New("the velocity has no outflow from any cell: no time step")
	}
	step := o.cfl * dt.Value()
	dt.SetValue(step)
	res.total0 = total.Value()
	fmt.Fprintf(out, "mesh: %d nodes, %d %s cells, %d interior and %d boundary facets; dt %.6e\n",
		m.Nodes.GlobalSize(), m.Cells.GlobalSize(), kinds(m), sizes(m.Interior), sizes(m.Boundary), step)
	fmt.Fprintf(out, "step %6d  t %.6f  total %.12e\n", 0, 0.0, res.total0)
	start := time.Now()
	for s := 1; s <= o.steps; s++ {
		for i, f := range m.Interior {
			loop("flux", f.Set, un[i].Arg(op2.Read), res.q.ArgMap(op2.Read, f.Cells, 0), res.q.ArgMap(op2.Read, f.Cells, 1),
				r.ArgMap(op2.Inc, f.Cells, 0), r.ArgMap(op2.Inc, f.Cells, 1))
		}
		total.SetValue(0)
		lo.SetValue(math.Inf(1))
		hi.SetValue(math.Inf(-1))
		loop("update", m.Cells, dt.Arg(op2.Read), geo.CellVolume.Arg(op2.Read), res.q.Arg(op2.RW), r.Arg(op2.RW),
			total.Arg(op2.Inc), lo.Arg(op2.Min), hi.Arg(op2.Max))
		if err != nil {
			return nil, err
		}
		if s%o.every == 0 || s == o.steps {
			fmt.Fprintf(out, "step %6d  t %.6f  total %.12e  min %.6e  max %.6e\n", s, float64(s)*step, total.Value(), lo.Value(), hi.Value())
		}
	}
	res.last, res.lo, res.hi = res.total0, 0, 0
	if o.steps > 0 {
		res.last, res.lo, res.hi = total.Value(), lo.Value(), hi.Value()
	}
	fmt.Fprintf(out, "total changed by %s in %d steps, which took %.3f s\n", change(res.total0, res.last), o.steps, time.Since(start).Seconds())
	if o.vtk != "" {
		w, err := writer(m)
		if err != nil {
			return nil, err
		}
		if err := vtk.CellDat(w, res.q); err != nil {
			return nil, err
		}
		if err := w.WriteFile(o.vtk, vtk.Binary); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// change says how much the total moved from total0 to last: relative to
// total0, or, when no cell started with q = 1 (total0 is 0: the ball
// holds no cell's centre, as on a coarse mesh), the absolute change,
// saying why.
func change(total0, last float64) string {
	if total0 == 0 {
		return fmt.Sprintf("%.1e (absolute: the initial total is 0, no cell's centre lies in the initial ball)", math.Abs(last-total0))
	}
	return fmt.Sprintf("%.1e (relative)", math.Abs(last-total0)/math.Abs(total0))
}

// writer returns a vtk.Writer of m's cells: of its one kind, or of each
// of its kinds for a mixed mesh.
func writer(m *unstructured.Mesh) (*vtk.Writer, error) {
	if m.CellNodes != nil {
		return vtk.NewWriter(m.X, m.CellNodes)
	}
	kinds := make([]vtk.CellKind, len(m.CellKinds))
	for i, ck := range m.CellKinds {
		kinds[i] = vtk.CellKind{Nodes: ck.Nodes, Cells: ck.Cells}
	}
	return vtk.NewMixedWriter(m.X, m.Cells, kinds)
}

// kinds names the mesh's kind of cell, or for a mixed mesh its kinds
// and how many cells of each: "mixed (1200 tetrahedra, 64 pyramids)".
func kinds(m *unstructured.Mesh) string {
	if m.Kind != 0 {
		return m.Kind.String()
	}
	var parts []string
	for _, ck := range m.CellKinds {
		parts = append(parts, fmt.Sprintf("%d %s", ck.Set.GlobalSize(), ck.Kind.Plural()))
	}
	return "mixed (" + strings.Join(parts, ", ") + ")"
}

// sizes adds up the global sizes of facet sets.
func sizes(fs []unstructured.Facets) int {
	n := 0
	for _, f := range fs {
		n += f.Set.GlobalSize()
	}
	return n
}
