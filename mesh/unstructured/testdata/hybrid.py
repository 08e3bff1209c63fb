"""Makes hybrid meshes with Gmsh, for the tests of mixed meshes.

python3 hybrid.py KIND OUT.msh [SIZE] [VERSION] (MSH 4.1 binary, or
VERSION 2.2; Debian: python3-gmsh):

  square  the unit square: quadrilaterals (a recombined transfinite
          patch) on x < 0.5, triangles on x > 0.5; groups "left" and
          "right" (surfaces) and "wall" (its sides)
  layer   the unit cube with a boundary layer on its bottom face: two
          layers of cells up to z = 0.2, extruded from the bottom face's
          mesh (hexahedra above the quadrilaterals of x < 0.5, prisms above
          the triangles of x > 0.5), and tetrahedra above, with pyramids
          where they meet the hexahedra's top faces; groups "bottom" (the
          wall the layer is on), "walls" (the other faces), "layer" and
          "core" (volumes)

SIZE is the mesh size (default 0.25).
"""
import sys, gmsh
kind, path = sys.argv[1], sys.argv[2]
size = float(sys.argv[3]) if len(sys.argv) > 3 else 0.25
version = float(sys.argv[4]) if len(sys.argv) > 4 else 4.1
n = max(2, int(round(0.5 / size)) + 1)  # nodes along the quadrilateral patch's sides
gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add(kind)
geo = gmsh.model.geo


def group(dim, tags, name):
    # Gmsh 4.8 (Debian 12) has no name argument in addPhysicalGroup.
    tag = gmsh.model.addPhysicalGroup(dim, tags)
    gmsh.model.setPhysicalName(dim, tag, name)


# The unit square at z = 0 in two halves sharing the line x = 0.5.
p = [geo.addPoint(x, y, 0, size) for x, y in [(0, 0), (0.5, 0), (1, 0), (1, 1), (0.5, 1), (0, 1)]]
l = [geo.addLine(p[i], p[(i + 1) % 6]) for i in range(6)]
mid = geo.addLine(p[1], p[4])
left = geo.addPlaneSurface([geo.addCurveLoop([l[0], mid, l[4], l[5]])])
right = geo.addPlaneSurface([geo.addCurveLoop([l[1], l[2], l[3], -mid])])
for c in [l[0], mid, l[4], l[5]]:
    geo.mesh.setTransfiniteCurve(c, n)
geo.mesh.setTransfiniteSurface(left)
geo.mesh.setRecombine(2, left)
if kind == "square":
    geo.synchronize()
    group(2, [left], "left")
    group(2, [right], "right")
    group(1, l, "wall")
    gmsh.model.mesh.generate(2)
elif kind == "layer":
    # extrude returns the top surface, the volume, then the sides.
    layer = [geo.extrude([(2, s)], 0, 0, 0.2, numElements=[2], recombine=True) for s in (left, right)]
    core = [geo.extrude([(2, e[0][1])], 0, 0, 0.8) for e in layer]
    geo.synchronize()
    sides = [t for e in layer + core for d, t in e[2:]]
    # The sides x = 0.5 between the halves are inside the cube.
    inner = [t for t in sides if sides.count(t) > 1]
    group(2, [left, right], "bottom")
    group(2, [e[0][1] for e in core] + [t for t in sides if t not in inner], "walls")
    group(3, [e[1][1] for e in layer], "layer")
    group(3, [e[1][1] for e in core], "core")
    gmsh.model.mesh.generate(3)
else:
    sys.exit("hybrid.py: KIND is square or layer, not " + kind)
gmsh.option.setNumber("Mesh.MshFileVersion", version)
gmsh.option.setNumber("Mesh.Binary", 1)
gmsh.write(path)
gmsh.finalize()
