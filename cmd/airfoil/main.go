// Command airfoil runs OP2's Airfoil benchmark on GoOP2: a 2-D inviscid
// flow around a NACA0012 aerofoil, solved by a finite-volume scheme with
// predictor/corrector time stepping, on the backend of your choice.
//
// Usage:
//
//	airfoil [-backend sequential|openmp|opencl|cuda] [-threads N] [-iters N] [-mesh FILE]
//	        [-I 400 -J 600] [-write-mesh FILE] [-dump-q FILE] [-vtk FILE.vtu] [-timing] [-elapsed]
//	        [-partition ptscotch|rcb|block|metis] [-startup] [-lazy[=false]] [-chain] [-fusion auto|on|off] [-tile N]
//	        [-checkpoint FILE [-checkpoint-every 100]]
//
// -checkpoint FILE saves an op2.Checkpoint every -checkpoint-every
// iterations; started again with FILE present (after a failure, on the
// same or another number of ranks), the run restores it and prints the
// rms lines still to come, the same as a run never stopped. A checkpoint
// at the last iteration asked for leaves none to run: the run says so and
// succeeds (OP2's pass line is printed by a run that computed the rms
// of iteration 1000).
//
// The loops are recorded and run when their results are read
// (op2.Config.Lazy, on by default; under MPI only those that send
// nothing when they run), with the same output; -lazy=false runs each
// loop at once. -chain
// records each iteration's loops in one op2.Chain scope (also under MPI,
// where a chain's halo exchanges are grouped), with the same output.
// -fusion sets how recorded loops fuse (op2.Config.Fusion) and -tile N
// runs them as sparse tiles of N cells (op2.Config.Tile) on the host
// backends (-tile -1: the size chosen per chain, where tiles pay, the
// default on one thread; -tile 0: off, the default on several). Under MPI -timing also prints rank 0's halo messages and
// agreements per iteration. -elapsed prints the time of the iterations
// alone, without the per-loop table (on a device, -timing times each loop
// between two stamps on the device, without waiting for it).
//
// Started by mpirun (mpirun -np 4 airfoil ...) it runs distributed: every
// rank reads (-mesh, ASCII or HDF5) or generates its own block of every
// set of the mesh (OP2's split: mesh.Block), so that no rank reads or
// builds the whole mesh; -partition chooses how the mesh is then split
// (default: PT-Scotch on the cells sharing an edge when libptscotch loads
// on every rank, else rcb, recursive coordinate bisection of the nodes;
// both run distributed; metis runs METIS on rank 0), rank 0
// prints, -dump-q gathers the solution in the mesh's numbering, and -vtk
// writes a parallel file: FILE.pvtu and one piece per rank in folder FILE
// (package vtk's WriteParallel), gathering nothing. Since no rank has the whole mesh, -write-mesh and -shuffle
// are refused under MPI: convert or shuffle a mesh on one process (or
// convert it with op2mesh).
//
// -startup makes every rank print one line on how it started: the time
// and peak resident memory (MB of 10^6 bytes, the process's maximum so
// far) after reading or generating its block of the mesh and after each
// step of op2.Partition, then the total until the solver was ready, such
// as
//
//	startup rank 1/2: read 0.412 s (peak 80.3 MB), partition 0.400 s (peak 120.1 MB), migrate 0.300 s (peak 130.0 MB), layout 0.200 s (peak 140.2 MB), values 0.050 s (peak 140.2 MB); total 1.384 s, peak 140.2 MB
//
// On one process the line (rank 0/1) has the read step only.
//
// -vtk FILE writes the mesh and the final solution (q, pressure, Mach
// number and each cell's number on the cells) as a VTK XML
// UnstructuredGrid; ParaView opens it, and op2render draws a picture of
// it. Under MPI it writes FILE.pvtu (for FILE.vtu) and its pieces, which
// ParaView opens as one mesh.
//
// Without -mesh it generates OP2's reference mesh (720 000 cells) in memory.
// -mesh reads OP2's ASCII format (optionally gzipped) or, for a file that
// starts with HDF5's signature, OP2's HDF5 layout (new_grid.h5, as
// op2mesh writes it; needs libhdf5 at run time). Under MPI either is
// read in parallel, each rank its block of every set. -write-mesh FILE.h5
// writes OP2's HDF5 layout, any other name the ASCII format.
// Every 100 iterations it prints the iteration and the rms change of the
// solution, in the format of OP2's reference; after 1000 iterations on the
// reference mesh it also says whether OP2's pass criterion holds.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/goop2/op2"
	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/internal/rss"
	"github.com/goop2/op2/mesh"
)

type options struct {
	backend   string
	threads   int
	blockSize int
	iters     int
	// checkpoint and checkpointEvery: -checkpoint, -checkpoint-every.
	checkpoint      string
	checkpointEvery int
	// killAt and killRank, for the fault tests: rank killRank kills
	// itself once iteration killAt is done (0: never).
	killAt, killRank int
	meshPath         string
	ni, nj           int
	writeMesh        string
	dumpQ            string
	vtkPath          string
	timing           bool
	elapsed          bool
	lazy             bool
	// eager runs each loop at once (-lazy=false: Lazy false, named
	// with op2.Config.Explicit), whatever the default and OP2_LAZY say.
	eager bool
	chain bool
	tile  int
	// noTile turns tiling off (-tile 0: Tile 0, named with
	// op2.Config.Explicit), whatever the default and OP2_TILE say.
	noTile    bool
	fusion    string
	partition string
	shuffle   uint64
	renumber  string
	startup   bool
	// noGather skips gathering the final q when nothing uses it (the
	// command without -dump-q): under MPI the gather puts the whole q on
	// rank 0. The tests leave it false and compare q.
	noGather bool
}

func main() {
	regfile.RemoveOnSignal() // ^C leaves no half-written output
	var o options
	flag.StringVar(&o.backend, "backend", "", "backend: "+fmt.Sprint(op2.Backends())+" (default $OP2_BACKEND, else sequential)")
	flag.IntVar(&o.threads, "threads", 0, "OpenMP threads (default $OMP_NUM_THREADS, else all CPUs, shared among the MPI ranks on this machine)")
	flag.IntVar(&o.blockSize, "block-size", 0, "execution plan block size (default adaptive)")
	flag.IntVar(&o.iters, "iters", 1000, "iterations (0: write the outputs asked for, -write-mesh, -dump-q and -vtk, of the initial state)")
	flag.StringVar(&o.meshPath, "mesh", "", "mesh file: OP2 ASCII, optionally gzipped, or OP2's HDF5 layout (default: generate the reference mesh)")
	flag.IntVar(&o.ni, "I", 400, "generated mesh: cells around the aerofoil section (the grid has 3I columns)")
	flag.IntVar(&o.nj, "J", 600, "generated mesh: cells from the surface to the far field")
	flag.StringVar(&o.writeMesh, "write-mesh", "", "write the mesh in OP2's ASCII format (.gz compresses), or its HDF5 layout with the flow fields and constants for *.h5 (under MPI only .h5, every rank writing its part); with -iters 0 (and no -dump-q or -vtk) do nothing else")
	flag.StringVar(&o.dumpQ, "dump-q", "", "write the final q in OP2's binary dat format")
	flag.StringVar(&o.vtkPath, "vtk", "", "write the mesh with q, pressure and Mach number as a VTK .vtu file after the run (for ParaView or op2render; under MPI a .pvtu file and one piece per rank)")
	flag.StringVar(&o.checkpoint, "checkpoint", "", "save an op2.Checkpoint to this file every -checkpoint-every iterations; when the file exists at start, resume from it (on any number of ranks) and print the rms lines still to come")
	flag.IntVar(&o.checkpointEvery, "checkpoint-every", 100, "iterations between checkpoints (with -checkpoint)")
	flag.BoolVar(&o.timing, "timing", false, "print op2's per-loop timing table (under MPI: rank 0's loops)")
	flag.BoolVar(&o.elapsed, "elapsed", false, "print the time of the iterations (without -timing's per-loop table)")
	flag.BoolVar(&o.lazy, "lazy", false, "record the loops and run them when their results are needed (op2.Config.Lazy; under MPI only the loops that send nothing); -lazy=false runs each loop at once (default $OP2_LAZY, else lazy)")
	flag.BoolVar(&o.chain, "chain", false, "record each iteration's loops in op2.Chain scopes (under MPI: grouped halo exchanges)")
	flag.IntVar(&o.tile, "tile", 0, "with lazy mode or -chain, run the recorded loops as sparse tiles of this many cells on the host backends (op2.Config.Tile; -1: chosen per chain; 0: off; default $OP2_TILE, else -1 on one thread (sequential) and 0 on several)")
	flag.StringVar(&o.fusion, "fusion", "", "with lazy mode or -chain, whether recorded loops fuse: auto, on or off (op2.Config.Fusion; default $OP2_FUSION, else auto)")
	flag.StringVar(&o.partition, "partition", "", "under MPI: how the mesh is split over the ranks (ptscotch, rcb, block or metis; default ptscotch when it loads on every rank, else rcb)")
	flag.Uint64Var(&o.shuffle, "shuffle", 0, "number the mesh's nodes, cells and edges in a random order drawn from this seed before declaring it (locality lost; 0: keep the order)")
	flag.BoolVar(&o.startup, "startup", false, "every rank prints the time and peak memory of reading or generating its block of the mesh and of partitioning it (with -checkpoint, also what a checkpoint write added to its memory)")
	flag.StringVar(&o.renumber, "renumber", "auto", "renumber the mesh for locality before the first iteration: rcm (reverse Cuthill–McKee on the cells), rcb (recursive coordinate bisection of the cells' centres), rcb-nodes (of the nodes), none (the mesh's own numbering) or auto (rcm in one process when a map of the mesh has poor locality, op2.Map.Locality; none under MPI, where Partition orders each rank's part)")
	flag.Parse()
	if err := regfile.EmptyOutput(flag.CommandLine, "write-mesh", "dump-q", "vtk", "checkpoint"); err != nil {
		fmt.Fprintln(os.Stderr, "airfoil:", err)
		os.Exit(2)
	}
	flag.Visit(func(f *flag.Flag) {
		if f.Name == "lazy" {
			o.eager = !o.lazy
		}
		if f.Name == "tile" {
			o.noTile = o.tile == 0
		}
	})
	o.noGather = o.dumpQ == ""
	if flag.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "airfoil: unexpected arguments %q\n", flag.Args())
		os.Exit(2)
	}
	stdout := &regfile.ErrWriter{W: os.Stdout} // its error fails the command
	if _, err := run(o, stdout); err != nil {
		// internal/airfoil's errors say "airfoil:" already.
		msg := "airfoil: " + strings.TrimPrefix(err.Error(), "airfoil: ")
		if op2.Ranks() > 1 {
			op2.Abort(errors.New(msg)) // stops every rank
		}
		fmt.Fprintln(os.Stderr, msg)
		os.Exit(1)
	}
	if err := op2.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "airfoil:", err)
		os.Exit(1)
	}
	if err := stdout.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "airfoil: writing standard output:", err)
		os.Exit(1)
	}
}

// result is what a run computed, for tests.
type result struct {
	rms     []float64 // every 100 iterations
	q       []float64 // final solution
	elapsed time.Duration
}

// Reference values: OP2's pass criterion at iteration 1000 on the reference mesh.
const (
	referenceCells = 720000
	referenceRMS   = 0.0001060114637578
)

func run(o options, out io.Writer) (*result, error) {
	if o.iters < 0 {
		return nil, fmt.Errorf("-iters %d: the number of iterations must not be negative", o.iters)
	}
	if o.iters == 0 && o.checkpoint != "" {
		return nil, fmt.Errorf("-checkpoint with -iters 0: no iteration runs, so no checkpoint is written or resumed from")
	}
	// With -iters 0 the outputs asked for are the initial state's.
	meshOnly := o.iters == 0 && o.dumpQ == "" && o.vtkPath == ""
	// Before anything is written: no output may overwrite the mesh or
	// another output (-checkpoint is read at start, and written).
	if err := regfile.CheckOutputs([]regfile.Named{{Flag: "-mesh", Path: o.meshPath}}, []regfile.Named{{Flag: "-write-mesh", Path: o.writeMesh},
		{Flag: "-dump-q", Path: o.dumpQ}, {Flag: "-vtk", Path: o.vtkPath}, {Flag: "-checkpoint", Path: o.checkpoint}}); err != nil {
		return nil, err
	}
	switch o.renumber {
	case "", "none", "auto", "rcm", "rcb", "rcb-nodes":
	default:
		return nil, fmt.Errorf("-renumber %q: want rcm, rcb, rcb-nodes, none or auto", o.renumber)
	}
	// Checked on one process too, where it is not used: the same command
	// line must not fail only once started by mpirun.
	if err := airfoil.CheckPartitioner(o.partition); err != nil {
		return nil, fmt.Errorf("-partition %q: want ptscotch, rcb, block or metis", o.partition)
	}
	cfg := op2.Config{Backend: o.backend, Threads: o.threads, BlockSize: o.blockSize, Timing: o.timing, Lazy: o.lazy, Tile: o.tile, Fusion: o.fusion}
	if o.eager {
		cfg = cfg.Explicit("Lazy")
	}
	if o.noTile {
		cfg = cfg.Explicit("Tile")
	}
	if err := op2.Configure(cfg); err != nil {
		return nil, err
	}
	rank, ranks := op2.Rank(), op2.Ranks()
	root := rank == 0
	if ranks > 1 {
		// Every rank holds only its block of the mesh until Partition
		// distributes it: nothing can write or renumber the whole mesh.
		if o.writeMesh != "" && !isHDF5Name(o.writeMesh) {
			return nil, fmt.Errorf("-write-mesh under MPI: %s is not an HDF5 file (FILE.h5), the only kind every rank writes its part of; for OP2's ASCII format write the mesh on one process (airfoil -iters 0 -write-mesh FILE) or convert it with op2mesh", o.writeMesh)
		}
		if o.shuffle != 0 {
			return nil, fmt.Errorf("-shuffle under MPI: each rank holds only its block of the mesh; write a shuffled mesh on one process (airfoil -shuffle SEED -iters 0 -write-mesh FILE) and run on that file")
		}
	}
	start := time.Now()
	m, err := loadMesh(o, rank, ranks)
	if err != nil {
		return nil, err
	}
	if err := finiteCoordinates(o.meshPath, m, rank, ranks); err != nil {
		return nil, err
	}
	rep := startupReport{rank: rank, ranks: ranks, start: start, read: time.Since(start), readPeak: rss.Peak()}
	if o.shuffle != 0 {
		m = m.Shuffled(o.shuffle)
	}
	if o.writeMesh != "" && ranks == 1 {
		if err := writeMesh(o.writeMesh, m); err != nil {
			return nil, err
		}
	}
	if meshOnly && (ranks == 1 || o.writeMesh == "") {
		if o.startup {
			rep.print(out)
		}
		return &result{}, nil
	}
	var s *airfoil.Solver
	if ranks > 1 {
		var info *op2.PartitionInfo
		if s, info, err = airfoil.NewDistributed(m, o.partition); err != nil {
			return nil, err
		}
		rep.phases = info.Phases
		if root && o.timing {
			fmt.Fprintln(out, info)
		}
	} else if s, err = airfoil.New(m); err != nil {
		return nil, err
	}
	defer s.Close()
	s.Chained = o.chain
	if o.writeMesh != "" && ranks > 1 {
		// The partitioned problem, every rank writing its part.
		start := time.Now()
		if err := s.WriteHDF5(o.writeMesh); err != nil {
			return nil, err
		}
		if o.startup && root {
			fmt.Fprintf(out, "wrote %s in %.3f s\n", o.writeMesh, time.Since(start).Seconds())
		}
		if meshOnly {
			return &result{}, nil
		}
	}
	if o.checkpoint != "" {
		if o.checkpointEvery < 1 {
			return nil, fmt.Errorf("-checkpoint-every %d: the iterations between checkpoints must be at least 1", o.checkpointEvery)
		}
		s.CheckpointPath, s.CheckpointEvery = o.checkpoint, o.checkpointEvery
	}
	if o.killAt > 0 && rank == o.killRank {
		s.AfterIteration = func(iter int) {
			if iter == o.killAt {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
			}
		}
	}
	if o.startup {
		rep.print(out)
	}
	if o.startup && o.checkpoint != "" {
		defer func() {
			if c := s.Checkpoints; c.Written > 0 {
				fmt.Fprintf(out, "rank %d: %d owned cells; a checkpoint write grew its memory by at most %.1f MB\n", rank, s.OwnedCells(), float64(c.Extra)/1e6)
			}
		}()
	}
	ordering := o.renumber
	switch {
	case ordering == "none":
		ordering = ""
	case ordering == "auto":
		ordering = ""
		if ranks > 1 {
			break // Partition ordered each rank's part
		}
		if poor := s.PoorLocality(); len(poor) > 0 {
			ordering = "rcm"
			if o.timing {
				fmt.Fprintf(out, "maps with poor locality: %s\n", strings.Join(poor, ", "))
			}
		}
	}
	if ordering != "" {
		start := time.Now()
		info, err := s.Renumber(ordering)
		if err != nil {
			return nil, err
		}
		if o.timing {
			fmt.Fprintf(out, "renumbered by %s (%v) in %.3f s\n", info.Ordering, info.Sets, time.Since(start).Seconds())
		}
	}
	halo := op2.ReadHaloStats()
	rms, elapsed, err := s.Iterate(o.iters, out)
	if err != nil {
		return nil, err
	}
	halo1 := op2.ReadHaloStats()
	var q []float64
	if !o.noGather {
		if q, err = s.Q(); err != nil {
			return nil, err
		}
	}
	res := &result{rms: rms, q: q, elapsed: elapsed}
	if root {
		verdict(out, o.iters, s.Cells(), res.rms)
	}
	if (o.timing || o.elapsed) && root {
		ran := o.iters - s.Checkpoints.Done // after a restored checkpoint, those past it
		fmt.Fprintf(out, "\nbackend %s, %d iterations, %.3f s\n", op2.Backend(), ran, res.elapsed.Seconds())
		if c := s.Checkpoints; c.Written > 0 || c.Restored {
			size := int64(0)
			if fi, err := os.Stat(o.checkpoint); err == nil {
				size = fi.Size()
			}
			fmt.Fprintf(out, "checkpoints: %d written in %.3f s, %.1f MB each", c.Written, c.Write.Seconds(), float64(size)/1e6)
			if c.Written > 0 {
				fmt.Fprintf(out, " (%.3f s, %.2f GB/s each)", c.Write.Seconds()/float64(c.Written), float64(size)*float64(c.Written)/c.Write.Seconds()/1e9)
			}
			if c.Restored {
				fmt.Fprintf(out, "; restored in %.3f s (%.2f GB/s)", c.Restore.Seconds(), float64(size)/c.Restore.Seconds()/1e9)
			}
			fmt.Fprintln(out)
		}
		if ranks > 1 && ran > 0 {
			it := float64(ran)
			fmt.Fprintf(out, "rank 0 halo traffic: %.2f messages (%.0f bytes) and %.2f agreements per iteration\n",
				float64(halo1.Messages-halo.Messages)/it, float64(halo1.Bytes-halo.Bytes)/it, float64(halo1.Agreements-halo.Agreements)/it)
		}
		if o.timing {
			if err := op2.WriteTimingTable(out); err != nil {
				return nil, err
			}
		}
	}
	if o.dumpQ != "" && root {
		if err := writeDat(o.dumpQ, res.q, 4); err != nil {
			return nil, err
		}
	}
	if o.vtkPath != "" {
		if err := s.WriteVTK(o.vtkPath); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// verdict prints OP2's pass criterion after 1000 iterations on the
// reference mesh: whether the last rms printed, rms's last, is OP2's. A
// run resumed from a checkpoint at its last iteration printed none, and
// has nothing to judge.
func verdict(out io.Writer, iters, cells int, rms []float64) {
	if iters != 1000 || cells != referenceCells || len(rms) == 0 {
		return
	}
	final := rms[len(rms)-1]
	diff := 100*final/referenceRMS - 100
	if diff < 0 {
		diff = -diff
	}
	if diff < 1e-5 {
		fmt.Fprintln(out, "This test is considered PASSED")
	} else {
		fmt.Fprintf(out, "This test is considered FAILED (rms differs from %.16g by %.3g%%)\n", referenceRMS, diff)
	}
}

// startupReport is what -startup prints on each rank.
type startupReport struct {
	rank, ranks int
	start       time.Time     // when reading the mesh began
	read        time.Duration // reading or generating this rank's block
	readPeak    int64         // peak resident bytes after reading
	phases      []op2.PartitionPhase
}

// print writes the report's line, with the total time since start and
// the peak memory so far.
func (r *startupReport) print(w io.Writer) {
	mb := func(b int64) float64 { return float64(b) / 1e6 }
	var b strings.Builder
	fmt.Fprintf(&b, "startup rank %d/%d: read %.3f s (peak %.1f MB)", r.rank, r.ranks, r.read.Seconds(), mb(r.readPeak))
	for _, p := range r.phases {
		fmt.Fprintf(&b, ", %s %.3f s (peak %.1f MB)", p.Name, p.Seconds, mb(p.MaxRSS))
	}
	fmt.Fprintf(&b, "; total %.3f s, peak %.1f MB\n", time.Since(r.start).Seconds(), mb(rss.Peak()))
	io.WriteString(w, b.String())
}

// loadMesh reads or generates the mesh: on one process the whole mesh,
// under MPI this rank's block of every set (mesh.ReadBlock,
// hdf5.ReadMeshBlock or mesh.GenerateBlock), for op2.Partition.
func loadMesh(o options, rank, ranks int) (*mesh.Mesh, error) {
	switch {
	case o.meshPath == "" && ranks > 1:
		return mesh.GenerateBlock(o.ni, o.nj, rank, ranks)
	case o.meshPath == "":
		return mesh.Generate(o.ni, o.nj)
	case ranks == 1:
		return readMesh(o.meshPath)
	}
	isH5 := isHDF5Name(o.meshPath)
	if !isH5 {
		var err error
		if isH5, err = hdf5.IsHDF5(o.meshPath); err != nil {
			return nil, err
		}
	}
	if isH5 {
		return readHDF5(o.meshPath, true)
	}
	return mesh.ReadBlock(o.meshPath, rank, ranks)
}

// finiteCoordinates returns an error naming the first node of m, this
// rank's block of the mesh read from path, whose coordinates are not
// finite numbers (OP2's format allows "nan" and "inf"): the solver
// would print NaN.
func finiteCoordinates(path string, m *mesh.Mesh, rank, ranks int) error {
	for i, v := range m.X {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			node := fmt.Sprintf("node %d", i/2)
			if ranks > 1 {
				node += fmt.Sprintf(" of rank %d's block", rank)
			}
			return fmt.Errorf("-mesh %s: %s has coordinate %v, not a finite number", path, node, v)
		}
	}
	return nil
}

// isHDF5Name reports whether a file name says HDF5.
func isHDF5Name(path string) bool {
	return strings.HasSuffix(path, ".h5") || strings.HasSuffix(path, ".hdf5")
}

// readMesh reads an ASCII or, by its signature, an HDF5 mesh.
func readMesh(path string) (*mesh.Mesh, error) {
	isH5, err := hdf5.IsHDF5(path)
	if err != nil {
		return nil, err
	}
	if isH5 {
		return readHDF5(path, false)
	}
	return mesh.ReadFile(path)
}

// readHDF5 reads an Airfoil mesh in OP2's HDF5 layout: whole, or this
// rank's block of every set.
func readHDF5(path string, block bool) (*mesh.Mesh, error) {
	f, err := hdf5.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if block {
		return hdf5.ReadMeshBlock(f, op2.Rank(), op2.Ranks())
	}
	return hdf5.ReadMesh(f)
}

// writeMesh writes OP2's HDF5 layout for *.h5 and *.hdf5, else ASCII.
func writeMesh(path string, m *mesh.Mesh) error {
	if !isHDF5Name(path) {
		return m.WriteFile(path)
	}
	return airfoil.WriteHDF5File(path, m)
}

// writeDat writes values in OP2's binary dat format: int32 element count,
// int32 dim, then the raw little-endian values.
func writeDat(path string, v []float64, dim int) error {
	buf := make([]byte, 8, 8+8*len(v))
	binary.LittleEndian.PutUint32(buf[0:], uint32(len(v)/dim))
	binary.LittleEndian.PutUint32(buf[4:], uint32(dim))
	for _, x := range v {
		buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
	}
	return regfile.WriteFile(path, buf)
}
