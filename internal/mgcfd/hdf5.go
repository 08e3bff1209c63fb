package mgcfd

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/goop2/op2/hdf5"
	"github.com/goop2/op2/internal/regfile"
)

// The dataset names of MG-CFD's per-level HDF5 files.
const (
	dsCoords     = "node_coordinates"
	dsEdgeNodes  = "edge-->node"
	dsEdgeWeight = "edge_weights"
	dsBndNodes   = "bnd_node-->node"
	dsBndGroups  = "bnd_node-->group"
	dsBndWeight  = "bnd_node_weights"
	dsMGNodes    = "node-->mg_node"
)

// InputFile is the name of the text file WriteHDF5 writes beside the
// levels' HDF5 files: MG-CFD's input.dat, which its binaries read with -i.
const InputFile = "input.dat"

// WriteHDF5 writes m into the folder dir in MG-CFD's input layout: one
// HDF5 file per level, mesh_L<l>.h5, with the datasets node_coordinates
// (nodes×3 double), edge-->node (edges×2 int), edge_weights (edges×3
// double), bnd_node-->node and bnd_node-->group (boundary nodes×1 int),
// bnd_node_weights (boundary nodes×3 double) and, on every level but the
// coarsest, node-->mg_node (nodes×1 int, into the next level's nodes); and
// the text file input.dat naming them, with 0-based maps
// (base_array_index=0). It returns input.dat's path. The original runs on
// it as euler3d -i input.dat -d dir.
func WriteHDF5(dir string, m *Mesh) (string, error) {
	if err := m.Check(); err != nil {
		return "", err
	}
	var in strings.Builder
	fmt.Fprintf(&in, "# A multigrid box mesh written by GoOP2's internal/mgcfd.\n")
	fmt.Fprintf(&in, "size=%d\nnum_levels=%d\nmesh_name=m6wing\nbase_array_index=0\n[levels]\n", m.Levels[0].NNodes, len(m.Levels))
	for l := range m.Levels {
		name := fmt.Sprintf("mesh_L%d.h5", l)
		fmt.Fprintf(&in, "%d=%s\n", l, name)
		if err := writeLevel(filepath.Join(dir, name), &m.Levels[l]); err != nil {
			return "", err
		}
	}
	path := filepath.Join(dir, InputFile)
	if err := regfile.WriteFile(path, []byte(in.String())); err != nil {
		return "", fmt.Errorf("mgcfd: %w", err)
	}
	return path, nil
}

// writeLevel writes level lv's file at path, whole or not at all
// (hdf5.WriteFile).
func writeLevel(path string, lv *Level) error {
	return hdf5.WriteFile(path, func(f *hdf5.File) error { return writeLevelTo(f, lv) })
}

func writeLevelTo(f *hdf5.File, lv *Level) error {
	steps := []func() error{
		func() error { return hdf5.WriteArray(f, dsCoords, 3, lv.Coords) },
		func() error { return f.WriteMapTable(dsEdgeNodes, 2, lv.EdgeNodes) },
		func() error { return hdf5.WriteArray(f, dsEdgeWeight, 3, lv.EdgeWeights) },
		func() error { return f.WriteMapTable(dsBndNodes, 1, lv.BndNodes) },
		func() error { return hdf5.WriteArray(f, dsBndGroups, 1, lv.BndGroups) },
		func() error { return hdf5.WriteArray(f, dsBndWeight, 3, lv.BndWeights) },
	}
	if lv.MGNodes != nil {
		steps = append(steps, func() error { return f.WriteMapTable(dsMGNodes, 1, lv.MGNodes) })
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

// ReadHDF5 reads a mesh in MG-CFD's input layout: the input.dat file at
// path (num_levels, base_array_index, and the [levels] section naming one
// HDF5 file per level, relative to input.dat's folder) and the files it
// names, as WriteHDF5 writes them. The mesh is checked (Mesh.Check); an
// error names the level's file and the dataset as the file names it.
func ReadHDF5(path string) (*Mesh, error) {
	levels, base, files, err := readInput(path)
	if err != nil {
		return nil, err
	}
	m := &Mesh{Levels: make([]Level, levels)}
	for l := range m.Levels {
		files[l] = filepath.Join(filepath.Dir(path), files[l])
		if err := readLevel(files[l], base, &m.Levels[l], l+1 < levels); err != nil {
			return nil, err
		}
	}
	if err := m.check(files, base); err != nil {
		return nil, err
	}
	return m, nil
}

// readInput parses MG-CFD's input.dat: key=value lines of any length, #
// comments, and a [levels] section of index=file lines.
func readInput(path string) (levels, base int, files []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("mgcfd: %w", err)
	}
	base = 1 // MG-CFD's default
	inLevels := false
	// The lines split whole, however long (a bufio.Scanner stops at a
	// line over 64 KiB, and the settings after it would go unread).
	for i, text := range strings.Split(string(b), "\n") {
		line := i + 1
		t := strings.TrimSpace(text)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			inLevels = t == "[levels]"
			if inLevels && levels < 1 {
				return 0, 0, nil, fmt.Errorf("mgcfd: %s:%d: [levels] before a positive num_levels", path, line)
			}
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			return 0, 0, nil, fmt.Errorf("mgcfd: %s:%d: %q is not key=value", path, line, clip(t))
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if inLevels {
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= levels {
				return 0, 0, nil, fmt.Errorf("mgcfd: %s:%d: level %q is not in [0,%d)", path, line, clip(k), levels)
			}
			files[i] = v
			continue
		}
		switch k {
		case "num_levels":
			levels, err = strconv.Atoi(v)
			if err != nil || levels < 1 || levels > 20 {
				return 0, 0, nil, fmt.Errorf("mgcfd: %s:%d: num_levels %q is not 1 to 20", path, line, clip(v))
			}
			files = make([]string, levels)
		case "base_array_index":
			base, err = strconv.Atoi(v)
			if err != nil || base < 0 || base > 9 {
				return 0, 0, nil, fmt.Errorf("mgcfd: %s:%d: base_array_index %q is not 0 to 9", path, line, clip(v))
			}
		}
	}
	if levels < 1 {
		return 0, 0, nil, fmt.Errorf("mgcfd: %s: no num_levels", path)
	}
	for l, f := range files {
		if f == "" {
			return 0, 0, nil, fmt.Errorf("mgcfd: %s: no file for level %d in [levels]", path, l)
		}
	}
	return levels, base, files, nil
}

// clip is s, cut to its first 60 bytes and an ellipsis where longer, for
// an error quoting a line of input.dat, which may be long.
func clip(s string) string {
	if len(s) <= 60 {
		return s
	}
	return strings.ToValidUTF8(s[:60], "") + "…"
}

func readLevel(path string, base int, lv *Level, coarser bool) (err error) {
	f, err := hdf5.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if lv.Coords, err = hdf5.ReadAll[float64](f, dsCoords, 3); err != nil {
		return err
	}
	if lv.EdgeNodes, err = hdf5.ReadAll[int32](f, dsEdgeNodes, 2); err != nil {
		return err
	}
	if lv.EdgeWeights, err = hdf5.ReadAll[float64](f, dsEdgeWeight, 3); err != nil {
		return err
	}
	if lv.BndNodes, err = hdf5.ReadAll[int32](f, dsBndNodes, 1); err != nil {
		return err
	}
	if lv.BndGroups, err = hdf5.ReadAll[int32](f, dsBndGroups, 1); err != nil {
		return err
	}
	if lv.BndWeights, err = hdf5.ReadAll[float64](f, dsBndWeight, 3); err != nil {
		return err
	}
	if coarser {
		if lv.MGNodes, err = hdf5.ReadAll[int32](f, dsMGNodes, 1); err != nil {
			return err
		}
	}
	lv.NNodes, lv.NEdges, lv.NBnd = len(lv.Coords)/3, len(lv.EdgeNodes)/2, len(lv.BndNodes)
	for _, m := range [][]int32{lv.EdgeNodes, lv.BndNodes, lv.MGNodes} {
		for i := range m {
			m[i] -= int32(base)
		}
	}
	return nil
}

// WriteSolution writes every level's variables as MG-CFD's validation
// files in dir: solution.variables.L<l>.cycles=<cycles>.h5, each holding
// the dataset p_variables_result_L<l> (nodes×5 double). The original run
// with -v -g cycles -d dir compares its variables after cycles cycles with
// them (to a relative 10⁻⁷) and prints "Validation passed" or "Validation
// failed". Under MPI it is collective and rank 0 writes.
func WriteSolution(dir string, s *Solver, cycles int) error {
	for l := 0; l < s.Levels(); l++ {
		v, err := s.Variables(l)
		if err != nil {
			return err
		}
		if err := writeSolutionLevel(filepath.Join(dir, fmt.Sprintf("solution.variables.L%d.cycles=%d.h5", l, cycles)), l, v); err != nil {
			return err
		}
	}
	return nil
}

// writeSolutionLevel writes level l's variables v to the file at path,
// whole or not at all (hdf5.WriteFile).
func writeSolutionLevel(path string, l int, v []float64) error {
	return hdf5.WriteFile(path, func(f *hdf5.File) error {
		return hdf5.WriteArray(f, fmt.Sprintf("p_variables_result_L%d", l), 5, v)
	})
}
