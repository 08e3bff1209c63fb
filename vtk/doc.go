// Package vtk writes and reads meshes with data in VTK's XML
// UnstructuredGrid format (.vtu), which ParaView and VisIt open: points
// (2-D coordinates are padded with z = 0), cells given by a cell-to-node
// table (of one kind, or of several kinds with a type per cell: lines,
// triangles, quadrilaterals, tetrahedra, pyramids, wedges, hexahedra), and
// arrays of values on the cells (CellData) and on the points (PointData),
// each with any number of components.
//
// A Grid holds plain slices; FromOP2 and AddCellDat/AddPointDat build one
// from GoOP2 Dats and Maps, gathering a distributed mesh on MPI rank 0.
// A Writer writes a mesh declared to GoOP2 without gathering it: one .vtu
// file on one process, and under MPI a parallel file (.pvtu, VTK's
// PUnstructuredGrid) naming one .vtu piece per rank, each rank writing
// its owned cells (see Writer.Piece and WriteParallel). NewMixedWriter
// writes a mesh whose cells are of several kinds (a hybrid mesh of
// mesh/unstructured), with one Dat over all its cells. Maps list a cell's
// nodes in Gmsh's order, as mesh/unstructured declares them; the files
// have VTK's, which differs for prisms (see Wedge). A Series lists
// the files of a time series in a ParaView collection (.pvd).
//
// Write produces ASCII or base64-encoded binary data inline in the XML (no
// compression, no appended section), so the file is well-formed XML that
// any XML parser reads. Read reads such files back, as written here or by
// VTK itself when they hold one piece of cells of the kinds above, inline
// and uncompressed; ReadPVTUFile reads a .pvtu file's pieces and Merge joins
// them into one Grid.
//
// The file formats are package vtkfile's, which imports no part of the
// GoOP2 run time; this package names its types as its own.
package vtk
