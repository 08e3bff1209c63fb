#!/usr/bin/env python3
"""Writes the Gmsh fixture of package mesh/topology's tests with Gmsh itself.

Run from this directory: python3 make.py (Debian: python3-gmsh). The tests
do not run it; they read the file it wrote, which is committed.

  pyramids.msh  two unit boxes side by side, [0,1]x[0,1]^2 transfinite and
                recombined (hexahedra), [1,2]x[0,1]^2 tetrahedra: Gmsh puts
                pyramids on the tetrahedral side of the shared face's
                quadrangles. MSH 4.1, ASCII, every element saved.
"""
import gmsh

gmsh.initialize()
gmsh.option.setNumber("General.Terminal", 0)
gmsh.model.add("pyramids")
occ = gmsh.model.occ
a = occ.addBox(0, 0, 0, 1, 1, 1)
b = occ.addBox(1, 0, 0, 1, 1, 1)
occ.fragment([(3, a)], [(3, b)])
occ.synchronize()
for _, c in gmsh.model.getEntities(1):
    gmsh.model.mesh.setTransfiniteCurve(c, 3)
hexes = gmsh.model.getEntities(3)[0][1]
for _, s in gmsh.model.getBoundary([(3, hexes)], oriented=False):
    gmsh.model.mesh.setTransfiniteSurface(s)
    gmsh.model.mesh.setRecombine(2, s)
gmsh.model.mesh.setTransfiniteVolume(hexes)
gmsh.model.mesh.generate(3)
gmsh.option.setNumber("Mesh.MshFileVersion", 4.1)
gmsh.option.setNumber("Mesh.Binary", 0)
gmsh.write("pyramids.msh")
gmsh.finalize()
