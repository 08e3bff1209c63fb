// Command poisson solves −Δu = f on the unit square with P1 finite
// elements on an unstructured triangle mesh and Dirichlet boundary values,
// with GoOP2 (internal/poisson): the stiffness matrix and the load are
// assembled by parallel loops over the triangles, the Dirichlet values
// are applied with Mat.ZeroRowsColumns (symmetric elimination, the
// right-hand side lifted), the system is solved by the built-in
// conjugate gradients (or BiCGStab) or, with -solver petsc, by PETSc
// (loaded at run time: Debian's libpetsc-real3.18), and the error
// against the exact solution is printed. Under MPI (mpirun -np N poisson …)
// rank 0 prints, and -vtk out.vtu writes out.pvtu and one piece per rank
// in folder out (package vtk's WriteParallel).
//
//	poisson [-n 64] [-jitter 0.25] [-seed 1] [-mesh FILE.msh|FILE.h5|FILE.cgns|BASE] [-write-mesh BASE]
//	        [-renumber auto|rcm|rcb|none] [-problem sine|linear]
//	        [-solver native|petsc] [-petsc-options "-ksp_type gmres ..."]
//	        [-method cg|bicgstab] [-precond jacobi|none] [-rtol 1e-10]
//	        [-norm default|preconditioned|unpreconditioned|natural]
//	        [-maxits N] [-backend sequential|openmp|...] [-threads N]
//	        [-timing] [-vtk out.vtu]
//
// -mesh FILE.msh reads a Gmsh mesh (MSH 2.2 or 4.1), -mesh FILE.h5 the
// HDF5 file `op2mesh convert FILE.msh FILE.h5` writes of one, and -mesh
// FILE.cgns a CGNS mesh, through package mesh/unstructured (which knows
// HDF5 and CGNS files by their content, whatever their name): a mesh of
// triangles, or of tetrahedra for the 3-D problem (u = sin πx sin πy
// sin πz, or linear; the boundary applied the same way). Loops over the
// boundary facets mark the Dirichlet nodes: those of the physical group
// "boundary" when the mesh has one (lines in 2-D, surfaces in 3-D), else
// of every boundary facet, and any node in no cell (poisson.Dirichlet).
// Under MPI every rank reads its blocks of the mesh (of an .h5 file only
// those, so that no rank holds the whole) and Partition distributes it.
// -mesh BASE (or BASE.node, or BASE.ele) reads Triangle's BASE.node (with
// boundary markers) and BASE.ele, as -write-mesh BASE (or BASE.node)
// writes them; a -mesh naming an existing file with no FILE.node beside
// it is read by mesh/unstructured. Without -mesh the mesh is generated;
// under MPI rank 0 declares those and Partition spreads them
// (AutoPartitioner).
//
// It prints the mesh, how the solve ended and the errors, e.g.
//
//	mesh: 64×64 squares, 4225 nodes, 8192 triangles (jitter 0.25)
//	solve: cg/jacobi, 248 iterations, residual 3.8e-12 (preconditioned norm), converged
//	error: L2 4.3e-04, largest at a node 7.6e-04
//
// A solve that did not converge (within -maxits iterations to -rtol,
// which must be above 0 and below 1) still prints these lines, with the solver's
// reason in place of "converged", and writes -vtk's file; then the
// command fails, saying so, with exit status 1, as PETSc's examples
// report a diverged solve.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/goop2/op2"
	"github.com/goop2/op2/internal/poisson"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/vtk"
)

type options struct {
	n               int
	jitter          float64
	seed            uint64
	problem         string
	solver          string
	petscOptions    string
	method, precond string
	rtol            float64
	norm            string
	maxits          int
	timing          bool
	backend         string
	threads         int
	vtkPath         string
	meshPath        string
	writeMesh       string
	renumber        string
}

func main() {
	regfile.RemoveOnSignal() // ^C leaves no half-written output
	var o options
	defineFlags(flag.CommandLine, &o)
	flag.Parse()
	if err := regfile.EmptyOutput(flag.CommandLine, "vtk", "write-mesh"); err != nil {
		fmt.Fprintln(os.Stderr, "poisson:", err)
		os.Exit(2)
	}
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "poisson: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	if err := checkMeshFlags(flag.CommandLine); err != nil {
		fmt.Fprintln(os.Stderr, "poisson:", err)
		os.Exit(2)
	}
	stdout := &regfile.ErrWriter{W: os.Stdout} // its error fails the command
	var out io.Writer = stdout
	if op2.Rank() != 0 {
		out = io.Discard // under MPI rank 0 prints
	}
	if err := run(o, out); err != nil {
		// The package's errors name it already.
		msg := "poisson: " + strings.TrimPrefix(err.Error(), "poisson: ")
		if op2.Ranks() > 1 {
			op2.Abort(errors.New(msg)) // stops every rank
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	if err := op2.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "poisson:", err)
		os.Exit(1)
	}
	if err := stdout.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "poisson: writing standard output:", err)
		os.Exit(1)
	}
}

// defineFlags defines the command's flags on fs, to be parsed into o.
func defineFlags(fs *flag.FlagSet, o *options) {
	fs.IntVar(&o.n, "n", 64, "the mesh has n×n squares, each cut into two triangles")
	fs.Float64Var(&o.jitter, "jitter", 0.25, "interior nodes move randomly by up to this fraction of the spacing (0 to 0.5)")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the node jitter")
	fs.StringVar(&o.problem, "problem", "sine", "exact solution: sine (u = sin πx sin πy) or linear (u = 1 + 2x − 3y)")
	fs.StringVar(&o.solver, "solver", "native", "who solves: native (GoOP2's own solvers) or petsc (PETSc's KSP, loaded at run time)")
	fs.StringVar(&o.petscOptions, "petsc-options", "", "PETSc options for -solver petsc, e.g. \"-ksp_type gmres -pc_type gamg\" (they override -method and -precond)")
	fs.StringVar(&o.method, "method", "cg", "Krylov method: cg or bicgstab (with -solver petsc, any KSP type)")
	fs.StringVar(&o.precond, "precond", "jacobi", "preconditioner: jacobi or none (with -solver petsc, any PC type)")
	fs.Float64Var(&o.rtol, "rtol", 1e-10, "relative tolerance of the solver (above 0, below 1)")
	fs.StringVar(&o.norm, "norm", "default", "norm of the residual the tolerance tests: default (preconditioned), preconditioned, unpreconditioned or natural (cg only)")
	fs.IntVar(&o.maxits, "maxits", 0, "at most this many solver iterations (default 10 000); a solve that has not converged by then fails the command")
	fs.BoolVar(&o.timing, "timing", false, "print the time of assembly and solve, and op2's per-loop timing table")
	fs.StringVar(&o.backend, "backend", "", "backend: "+fmt.Sprint(op2.Backends())+" (default $OP2_BACKEND, else sequential)")
	fs.IntVar(&o.threads, "threads", 0, "OpenMP threads (default $OMP_NUM_THREADS, else all CPUs, shared among the MPI ranks on this machine)")
	fs.StringVar(&o.vtkPath, "vtk", "", "write the mesh with u as a VTK .vtu file (under MPI a .pvtu file and one piece per rank)")
	fs.StringVar(&o.renumber, "renumber", "auto", "renumber the mesh for locality before assembling: rcm (reverse Cuthill–McKee on the nodes: a banded matrix), rcb (recursive coordinate bisection of the nodes), none (the mesh's own numbering) or auto (rcm in one process; under MPI Partition orders each rank's part)")
	fs.StringVar(&o.meshPath, "mesh", "", "read the mesh instead of generating it: a Gmsh FILE.msh, the FILE.h5 that op2mesh convert makes of one, or a CGNS FILE.cgns (under MPI each rank reads its blocks), of triangles, or of tetrahedra for the 3-D problem (its physical group \"boundary\" is the Dirichlet boundary, else every boundary facet), or Triangle's BASE.node (with boundary markers) and BASE.ele (-mesh BASE, BASE.node or BASE.ele)")
	fs.StringVar(&o.writeMesh, "write-mesh", "", "write the 2-D mesh as Triangle's BASE.node and BASE.ele (-write-mesh BASE or BASE.node), the Dirichlet nodes marked")
}

// checkMeshFlags refuses -n, -jitter and -seed given with -mesh: they
// shape the generated mesh, which -mesh replaces, and would be ignored.
func checkMeshFlags(fs *flag.FlagSet) error {
	return regfile.GeneratedOnly(fs, "mesh", "n", "jitter", "seed")
}

// norms are -norm's values.
var norms = map[string]op2.NormType{"default": op2.NormDefault, "preconditioned": op2.NormPreconditioned,
	"unpreconditioned": op2.NormUnpreconditioned, "natural": op2.NormNatural}

func run(o options, out io.Writer) error {
	p, ok := poisson.Problems[o.problem]
	if !ok {
		return fmt.Errorf("unknown problem %q (sine or linear)", o.problem)
	}
	switch o.renumber {
	case "", "auto", "none", "rcm", "rcb":
	default:
		return fmt.Errorf("-renumber %q: want auto, rcm, rcb or none", o.renumber)
	}
	// The solver's options would take 0 for their default: a user asking
	// for 0 must not get 1e-10 silently.
	// A tolerance of 1 or more is met before the first iteration.
	if !(o.rtol > 0 && o.rtol < 1) {
		return fmt.Errorf("-rtol %g: want a relative tolerance above 0 and below 1 (the default is 1e-10; -maxits bounds the iterations)", o.rtol)
	}
	if o.maxits < 0 {
		return fmt.Errorf("-maxits %d: want at least 1 iteration (0: the default, 10 000)", o.maxits)
	}
	if err := o.checkOutputs(); err != nil {
		return err
	}
	// Fields left zero take their defaults from the environment.
	if err := op2.Configure(op2.Config{Backend: o.backend, Threads: o.threads, Timing: o.timing}); err != nil {
		return err
	}
	base, triangle := triangleBase(o.meshPath)
	if o.meshPath != "" && !triangle {
		return runMesh(o, out)
	}
	o.writeMesh, _ = triangleBase(o.writeMesh)
	var m *poisson.Mesh
	var err error
	if o.meshPath != "" {
		if _, err := os.Stat(base + ".node"); errors.Is(err, os.ErrNotExist) && base == o.meshPath {
			return fmt.Errorf("-mesh %s: no such file, nor Triangle's %s.node", o.meshPath, base)
		}
		if m, err = poisson.ReadTriangle(base); err != nil {
			return err
		}
		fmt.Fprintf(out, "mesh: %s, %d nodes, %d triangles\n", o.meshPath, m.Nodes, len(m.Tri)/3)
	} else {
		if m, err = poisson.Square(o.n, o.jitter, o.seed); err != nil {
			return err
		}
		fmt.Fprintf(out, "mesh: %d×%d squares, %d nodes, %d triangles (jitter %g)\n", o.n, o.n, m.Nodes, len(m.Tri)/3, o.jitter)
	}
	if o.writeMesh != "" && op2.Rank() == 0 {
		if err := poisson.WriteTriangle(m, o.writeMesh); err != nil {
			return err
		}
	}
	solverOpts, err := o.solverOptions()
	if err != nil {
		return err
	}
	res, err := poisson.SolveWith(m, p, poisson.Options{Renumber: o.ordering(), Solver: solverOpts})
	if err != nil {
		return err
	}
	return report(o, res, 2, out)
}

// triangleBase tells Triangle's files from a mesh file for package
// mesh/unstructured: for BASE, BASE.node or BASE.ele it returns BASE and
// true; for a file named *.msh, *.h5, *.hdf5 or *.cgns, or any other
// existing file beside which there is no FILE.node (unstructured.Load
// knows HDF5 and CGNS files by their content), false.
func triangleBase(path string) (base string, triangle bool) {
	for _, ext := range []string{".node", ".ele"} {
		if strings.HasSuffix(path, ext) {
			return strings.TrimSuffix(path, ext), true
		}
	}
	for _, ext := range []string{".msh", ".h5", ".hdf5", ".cgns"} {
		if strings.HasSuffix(path, ext) {
			return path, false
		}
	}
	if _, err := os.Stat(path + ".node"); err != nil {
		if fi, err := os.Stat(path); err == nil && !fi.IsDir() {
			return path, false
		}
	}
	return path, true
}

// checkOutputs refuses, before anything is written, an output (-vtk,
// -write-mesh's BASE.node and BASE.ele) that is the mesh read (-mesh, or
// its BASE.node and BASE.ele) or another output.
func (o options) checkOutputs() error {
	var in, out []regfile.Named
	if base, triangle := triangleBase(o.meshPath); o.meshPath != "" && triangle {
		in = []regfile.Named{{Flag: "-mesh", Path: base + ".node"}, {Flag: "-mesh", Path: base + ".ele"}}
	} else {
		in = []regfile.Named{{Flag: "-mesh", Path: o.meshPath}}
	}
	if o.writeMesh != "" {
		base, _ := triangleBase(o.writeMesh)
		out = []regfile.Named{{Flag: "-write-mesh", Path: base + ".node"}, {Flag: "-write-mesh", Path: base + ".ele"}}
	}
	return regfile.CheckOutputs(in, append(out, regfile.Named{Flag: "-vtk", Path: o.vtkPath}))
}

// solverOptions are the solver's options as the flags say.
func (o options) solverOptions() (op2.SolverOptions, error) {
	norm, ok := norms[o.norm]
	if !ok && o.norm != "" {
		return op2.SolverOptions{}, fmt.Errorf("unknown norm %q (default, preconditioned, unpreconditioned or natural)", o.norm)
	}
	return op2.SolverOptions{Package: o.solver, PETScOptions: o.petscOptions,
		Method: o.method, Precond: o.precond, RTol: o.rtol, MaxIts: o.maxits, Norm: norm}, nil
}

// ordering is -renumber as poisson.Options.Renumber takes it: auto is
// rcm in one process and, under MPI (where Partition orders each rank's
// part), the mesh's own numbering, as none is.
func (o options) ordering() string {
	switch {
	case o.renumber == "none", o.renumber == "auto" && op2.Ranks() > 1:
		return ""
	case o.renumber == "auto":
		return "rcm"
	}
	return o.renumber
}

// runMesh solves on the mesh file o.meshPath, declared by package
// mesh/unstructured (under MPI every rank reads its blocks): the 2-D
// problem on triangles, the 3-D one on tetrahedra.
func runMesh(o options, out io.Writer) error {
	solverOpts, err := o.solverOptions()
	if err != nil {
		return err
	}
	m, err := poisson.Load(o.meshPath, o.ordering())
	if err != nil {
		return err
	}
	var res *poisson.Result
	if m.Dim == 3 && o.writeMesh != "" {
		return fmt.Errorf("-write-mesh writes Triangle's 2-D format; %s is a 3-D mesh", o.meshPath)
	}
	// Load took triangles or tetrahedra only.
	fmt.Fprintf(out, "mesh: %s, %d nodes, %d %s\n", o.meshPath, m.Nodes.GlobalSize(), m.Cells.GlobalSize(), m.Kind.Plural())
	if m.Dim == 3 {
		res, err = poisson.SolveMesh3(m, poisson.Problems3[o.problem], solverOpts)
	} else {
		res, err = poisson.SolveMesh(m, poisson.Problems[o.problem], solverOpts)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", o.meshPath, err)
	}
	if o.writeMesh != "" {
		base, _ := triangleBase(o.writeMesh)
		if err := writeTriangle(res, base); err != nil {
			return err
		}
	}
	return report(o, res, m.Dim, out)
}

// writeTriangle writes the 2-D mesh of res, with its Dirichlet nodes as
// boundary markers, as Triangle's base.node and base.ele, in the file's
// numbering: rank 0 gathers it (collective).
func writeTriangle(res *poisson.Result, base string) error {
	x, err := res.X.Gather()
	if err != nil {
		return err
	}
	tri, err := res.Cells.Gather()
	if err != nil {
		return err
	}
	bnd, err := res.Boundary.Gather()
	if err != nil {
		return err
	}
	if op2.Rank() != 0 {
		return nil
	}
	return poisson.WriteTriangle(&poisson.Mesh{Nodes: len(bnd), X: x, Tri: tri, Boundary: bnd}, base)
}

// report prints how the solve ended and the errors (in 3-D the L2 error
// alone), with -timing the times and op2's table, and with -vtk writes u;
// then it returns an error when the solver did not converge.
func report(o options, res *poisson.Result, dim int, out io.Writer) error {
	state := "converged"
	if !res.Info.Converged {
		state = res.Info.Reason
	}
	who := ""
	if o.solver == "petsc" {
		who = "PETSc "
	}
	fmt.Fprintf(out, "solve: %s%s/%s, %d iterations, residual %.1e (%s norm), %s\n", who, res.Info.Method, res.Info.Precond, res.Info.Iterations,
		res.Info.Residual, res.Info.Norm, state)
	if dim == 3 {
		fmt.Fprintf(out, "error: L2 %.1e\n", res.L2Error)
	} else {
		fmt.Fprintf(out, "error: L2 %.1e, largest at a node %.1e\n", res.L2Error, res.MaxNode)
	}
	if o.timing {
		iterating := res.Solve - res.Info.Setup
		fmt.Fprintf(out, "time: assembly %.3f s (matrix %.3f s), solver start %.3f s, solve %.3f s (set-up %.3f s, %.2f ms per iteration)\n",
			res.Assembly.Seconds(), res.MatrixAssembly.Seconds(), res.SolverStart.Seconds(), res.Solve.Seconds(), res.Info.Setup.Seconds(),
			1e3*iterating.Seconds()/float64(max(res.Info.Iterations, 1)))
		if err := op2.WriteTimingTable(out); err != nil {
			return err
		}
	}
	if o.vtkPath != "" {
		// One .vtu on one process; under MPI a .pvtu and a piece per rank.
		w, err := vtk.NewWriter(res.X, res.Cells)
		if err != nil {
			return err
		}
		if err := vtk.PointDat(w, res.U); err != nil {
			return err
		}
		if err := w.WriteFile(o.vtkPath, vtk.Binary); err != nil {
			return err
		}
	}
	if !res.Info.Converged {
		return fmt.Errorf("the solver did not converge: %s; raise -maxits, or -rtol", res.Info.Reason)
	}
	return nil
}
