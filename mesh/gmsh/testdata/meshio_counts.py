#!/usr/bin/env python3
"""Prints, as JSON, what meshio reads in a .msh file: the number of nodes,
elements per meshio cell type, and elements per named physical group (those
of the group's dimension whose gmsh:physical is its tag). Run by the tests
of package mesh/gmsh (meshio_test.go) when python3-meshio is installed."""
import sys, json, meshio
m = meshio.read(sys.argv[1])
dims = {"vertex":0,"line":1,"triangle":2,"quad":2,"tetra":3,"hexahedron":3,"wedge":3,"pyramid":3}
out = {"nodes": len(m.points), "cells": {}, "groups": {}}
phys = m.cell_data.get("gmsh:physical")
for k, b in enumerate(m.cells):
    out["cells"][b.type] = out["cells"].get(b.type, 0) + len(b.data)
for name, (tag, dim) in m.field_data.items():
    n = 0
    for k, b in enumerate(m.cells):
        if dims[b.type] == dim and phys is not None:
            n += int((phys[k] == tag).sum())
    out["groups"][name] = n
print(json.dumps(out, sort_keys=True))
