// Command op2mesh converts Airfoil meshes between OP2's ASCII format
// (new_grid.dat, optionally gzipped) and OP2's HDF5 layout (new_grid.h5),
// or writes the generated NACA0012 mesh in either; and it converts Gmsh
// and CGNS meshes to the HDF5 layout package mesh/unstructured reads in
// blocks, one per MPI rank.
//
// Usage:
//
//	op2mesh [-in FILE | -I 400 -J 600] -o FILE
//	op2mesh convert FILE.msh FILE.h5
//	op2mesh convert FILE.cgns FILE.h5
//
// An input whose content is a Gmsh mesh (package mesh/gmsh) or a CGNS mesh
// (package mesh/cgns, libcgns at run time), whatever its name, is written,
// cells oriented positively, with its physical groups, as
// unstructured.WriteHDF5 does, and the output must be *.h5 or *.hdf5;
// unstructured.Load then declares it on any number of ranks, each reading
// only its blocks of the file.
//
// The input is read as HDF5 when it starts with HDF5's signature, else as
// ASCII; without -in the mesh is generated (-I, -J as cmd/airfoil). An
// output named *.h5 or *.hdf5 is written as OP2's Airfoil HDF5 file: the
// sets nodes, edges, bedges, cells; the maps pedge, pecell, pbedge,
// pbecell, pcell; the dats p_bound, p_x, p_q, p_qold, p_adt, p_res; the
// constants gam, gm1, cfl, eps, mach, alpha, qinf. Any other output is
// written in the ASCII format (gzipped when it ends in .gz). HDF5 needs
// libhdf5 at run time (Debian: apt-get install libhdf5-103-1; or point
// OP2_HDF5_LIBRARY at a library).
package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/airfoil"
	"github.com/goop2/op2/internal/regfile"
	"github.com/goop2/op2/mesh"
	"github.com/goop2/op2/mesh/cgns"
	"github.com/goop2/op2/mesh/unstructured"
)

func main() {
	regfile.RemoveOnSignal() // ^C leaves no half-written output
	flag.Usage = func() { usage(flag.CommandLine) }
	o, err := parseArgs(flag.CommandLine, os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "op2mesh:", err)
		if errors.As(err, new(formError)) {
			fmt.Fprintln(os.Stderr)
			flag.Usage()
		}
		os.Exit(2)
	}
	err = checkPaths(o.in, o.out, o.convert)
	if err == nil {
		err = convert(o.in, o.ni, o.nj, o.out)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "op2mesh:", err)
		os.Exit(1)
	}
}

// options are what op2mesh's command line asks for.
type options struct {
	in, out string // "" in: generate the mesh
	ni, nj  int    // the generated mesh's I and J
	convert bool   // the convert IN OUT form
}

// formError is a command line of neither of op2mesh's forms: main shows
// the usage after it.
type formError struct{ error }

// parseArgs declares op2mesh's flags on fs, parses args and returns what
// they ask for, or an error saying what is wrong: a flag of one form
// with the other's (convert IN OUT with -in, -o, -I or -J; -in with -I
// or -J, which size the mesh -in replaces), an argument of neither form,
// a missing -o, an empty input path (which would mean "generate") or a
// grid size below 1.
func parseArgs(fs *flag.FlagSet, args []string) (options, error) {
	var o options
	fs.StringVar(&o.in, "in", "", "input mesh: OP2 ASCII (optionally gzipped) or HDF5 (default: generate)")
	fs.IntVar(&o.ni, "I", 400, "generated mesh: cells around the aerofoil section (the grid has 3I columns)")
	fs.IntVar(&o.nj, "J", 600, "generated mesh: cells from the surface to the far field")
	fs.StringVar(&o.out, "o", "", "output file: *.h5 or *.hdf5 for OP2's HDF5 layout, else ASCII (.gz compresses)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := regfile.EmptyOutput(fs, "o"); err != nil {
		return o, err
	}
	var set []string // the flags given, in fs's order
	fs.Visit(func(f *flag.Flag) { set = append(set, "-"+f.Name) })
	has := func(name string) bool { return slices.Contains(set, name) }
	if fs.NArg() > 0 {
		if fs.Arg(0) != "convert" {
			return o, formError{fmt.Errorf("unexpected arguments %q (the arguments are convert IN OUT; a mesh to convert is -in FILE)", fs.Args())}
		}
		if fs.NArg() != 3 {
			return o, formError{fmt.Errorf("convert takes an input and an output, got %q", fs.Args()[1:])}
		}
		if len(set) > 0 {
			return o, formError{fmt.Errorf("%s with convert IN OUT: convert takes no flags (its arguments are the input and the output)", strings.Join(set, ", "))}
		}
		o.in, o.out, o.convert = fs.Arg(1), fs.Arg(2), true
		if o.in == "" {
			return o, fmt.Errorf("convert \"\" %s: an empty input path names no file", o.out)
		}
		return o, nil
	}
	if has("-in") && o.in == "" {
		return o, fmt.Errorf("-in \"\": an empty input path names no file (leave -in out to generate the mesh)")
	}
	if has("-in") {
		for _, g := range []struct {
			name string
			v    int
		}{{"-I", o.ni}, {"-J", o.nj}} {
			if has(g.name) {
				return o, formError{fmt.Errorf("-in %s with %s %d: -I and -J size the generated mesh, which -in replaces", o.in, g.name, g.v)}
			}
		}
	}
	if o.out == "" {
		return o, formError{fmt.Errorf("no output: name it with -o FILE")}
	}
	if o.in == "" {
		for _, g := range []struct {
			name string
			v    int
		}{{"I", o.ni}, {"J", o.nj}} {
			if g.v < 1 {
				return o, fmt.Errorf("-%s %d: the generated mesh needs at least 1", g.name, g.v)
			}
		}
	}
	return o, nil
}

// usage writes the command's two forms and fs's flags to fs's output.
func usage(fs *flag.FlagSet) {
	fmt.Fprint(fs.Output(), `usage: op2mesh [-in FILE | -I 400 -J 600] -o FILE
       op2mesh convert FILE.msh FILE.h5

The first form converts an Airfoil mesh between OP2's ASCII format and
OP2's HDF5 layout (by the output's name: *.h5 or *.hdf5, else ASCII), or
writes the generated NACA0012 mesh. The second converts a Gmsh mesh to
the HDF5 file that unstructured.Load reads in blocks, one per MPI rank
(a CGNS mesh, and an OP2 mesh, convert with it too: op2mesh convert IN
OUT; the input's content, not its name, says which it is).

`)
	fs.PrintDefaults()
}

// checkPaths refuses, before anything is written, an output that is the
// input (-in and -o, or convert's two arguments, naming them so).
func checkPaths(in, out string, convertForm bool) error {
	inName, outName := "-in", "-o"
	if convertForm {
		inName, outName = "convert's input", "its output"
		if out == "" {
			return fmt.Errorf("convert %s \"\": an empty output path names no file", in)
		}
	}
	return regfile.CheckOutputs([]regfile.Named{{Flag: inName, Path: in}}, []regfile.Named{{Flag: outName, Path: out}})
}

// isHDF5Name reports whether a file name asks for HDF5.
func isHDF5Name(path string) bool {
	return strings.HasSuffix(path, ".h5") || strings.HasSuffix(path, ".hdf5")
}

func convert(in string, ni, nj int, out string) error {
	what, err := unstructuredKind(in)
	if err != nil {
		return err
	}
	if what != "" {
		if !isHDF5Name(out) {
			return fmt.Errorf("%s: %s converts to HDF5 only: name the output *.h5 or *.hdf5", out, what)
		}
		return unstructured.Convert(in, out)
	}
	m, err := read(in, ni, nj)
	if err != nil {
		return err
	}
	if !isHDF5Name(out) {
		return m.WriteFile(out)
	}
	return airfoil.WriteHDF5File(out, m)
}

// unstructuredKind says, from its content as unstructured.Load reads it
// and not from its name, whether the file in is a Gmsh mesh ("a Gmsh
// mesh": it starts with $MeshFormat) or a CGNS one ("a CGNS mesh"); ""
// for anything else (an Airfoil mesh, ASCII or HDF5) and for no file
// (the generated mesh).
func unstructuredKind(in string) (string, error) {
	if in == "" {
		return "", nil
	}
	if ok, err := cgns.IsCGNS(in); err != nil {
		return "", err
	} else if ok {
		return "a CGNS mesh", nil
	}
	f, err := regfile.Open(in)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The first bytes that are not white space, as the Gmsh reader skips.
	r := bufio.NewReader(f)
	for {
		c, err := r.ReadByte()
		if err == io.EOF {
			return "", nil
		}
		if err != nil {
			return "", err
		}
		if !bytes.ContainsRune([]byte(" \t\r\n\v\f"), rune(c)) {
			r.UnreadByte()
			break
		}
	}
	head, err := r.Peek(len("$MeshFormat"))
	if err != nil && err != io.EOF {
		return "", err
	}
	if bytes.Equal(head, []byte("$MeshFormat")) {
		return "a Gmsh mesh", nil
	}
	return "", nil
}

func read(in string, ni, nj int) (*mesh.Mesh, error) {
	if in == "" {
		return mesh.Generate(ni, nj)
	}
	isH5, err := hdf5.IsHDF5(in)
	if err != nil {
		return nil, err
	}
	if !isH5 {
		return mesh.ReadFile(in)
	}
	f, err := hdf5.Open(in)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return hdf5.ReadMesh(f)
}
