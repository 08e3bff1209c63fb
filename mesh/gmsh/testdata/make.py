#!/usr/bin/env python3
"""Writes the Gmsh fixtures of package mesh/gmsh with Gmsh itself.

Run from this directory: python3 make.py (Debian: python3-gmsh). The tests
do not run it; they read the files it wrote, which are committed.

  square-*.msh  unit square, triangles; physical "boundary" (its four
                curves, dimension 1) and "domain" (the surface, dimension 2)
  box-*.msh     unit box, tetrahedra; "walls" (surfaces) and "volume"
  mixed-*.msh   extruded square: prisms below, hexahedra above (recombined
                extrusion), with "bottom", "top" and the two volumes
  reversed-*.msh unit square, 4 triangles; groups holding entities
                reversed: "left" (curve -4), "s" (surface -1), and "right"
                (curve 2); MSH 4.1 writes their physical tags negative

Each mesh is written as MSH 2.2 and 4.1, ASCII and binary.
"""
import gmsh

ENCODINGS = [("22-ascii", 2.2, 0), ("22-binary", 2.2, 1),
             ("41-ascii", 4.1, 0), ("41-binary", 4.1, 1)]


def group(dim, tags, name):
    # Gmsh 4.8 (Debian 12) has no name argument in addPhysicalGroup.
    tag = gmsh.model.addPhysicalGroup(dim, tags)
    gmsh.model.setPhysicalName(dim, tag, name)


def write(name):
    for suffix, version, binary in ENCODINGS:
        gmsh.option.setNumber("Mesh.MshFileVersion", version)
        gmsh.option.setNumber("Mesh.Binary", binary)
        gmsh.write(f"{name}-{suffix}.msh")


def square():
    gmsh.model.add("square")
    s = gmsh.model.occ.addRectangle(0, 0, 0, 1, 1)
    gmsh.model.occ.synchronize()
    curves = [t for _, t in gmsh.model.getBoundary([(2, s)], oriented=False)]
    group(1, curves, "boundary")
    group(2, [s], "domain")
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), 0.3)
    gmsh.model.mesh.generate(2)
    write("square")


def box():
    gmsh.model.add("box")
    v = gmsh.model.occ.addBox(0, 0, 0, 1, 1, 1)
    gmsh.model.occ.synchronize()
    surfaces = [t for _, t in gmsh.model.getBoundary([(3, v)], oriented=False)]
    group(2, surfaces, "walls")
    group(3, [v], "volume")
    gmsh.model.mesh.setSize(gmsh.model.getEntities(0), 0.5)
    gmsh.model.mesh.generate(3)
    write("box")


def mixed():
    gmsh.model.add("mixed")
    geo = gmsh.model.geo
    p = [geo.addPoint(x, y, 0) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
    lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
    loop = geo.addCurveLoop(lines)
    s = geo.addPlaneSurface([loop])
    for c in lines:
        geo.mesh.setTransfiniteCurve(c, 3)
    # Triangles extruded to prisms, then the top extruded as hexahedra is
    # not possible from triangles; so extrude twice: prisms from the
    # triangles of s, and a second square surface of quadrangles for hexes.
    lower = geo.extrude([(2, s)], 0, 0, 0.5, numElements=[1], recombine=True)
    q = [geo.addPoint(x, y, 0) for x, y in [(2, 0), (3, 0), (3, 1), (2, 1)]]
    qlines = [geo.addLine(q[i], q[(i + 1) % 4]) for i in range(4)]
    qs = geo.addPlaneSurface([geo.addCurveLoop(qlines)])
    for c in qlines:
        geo.mesh.setTransfiniteCurve(c, 3)
    geo.mesh.setTransfiniteSurface(qs)
    geo.mesh.setRecombine(2, qs)
    upper = geo.extrude([(2, qs)], 0, 0, 0.5, numElements=[1], recombine=True)
    geo.synchronize()
    group(2, [s, qs], "bottom")
    group(2, [lower[0][1], upper[0][1]], "top")
    group(3, [lower[1][1]], "prisms")
    group(3, [upper[1][1]], "hexes")
    gmsh.model.mesh.generate(3)
    write("mixed")


def reversed_groups():
    gmsh.model.add("reversed")
    geo = gmsh.model.geo
    p = [geo.addPoint(x, y, 0, 2) for x, y in [(0, 0), (1, 0), (1, 1), (0, 1)]]
    lines = [geo.addLine(p[i], p[(i + 1) % 4]) for i in range(4)]
    s = geo.addPlaneSurface([geo.addCurveLoop(lines)])
    geo.synchronize()
    group(1, [-lines[3]], "left")
    group(1, [lines[1]], "right")
    group(2, [-s], "s")
    gmsh.model.mesh.generate(2)
    write("reversed")


gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
square()
box()
mixed()
reversed_groups()
gmsh.finalize()
