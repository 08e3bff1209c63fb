package op2

import "github.com/goop2/op2/internal/exec"

// TileAuto is the Config.Tile value (OP2_TILE=auto) that lets GoOP2,
// in one process, choose per chain of recorded loops whether
// they run in sparse tiles and of how many elements: tiles where the
// chain's data does not fit the last-level cache and tiles cut the bytes
// it moves, each tile's data sized to half of one CPU's part of the
// last-level cache (see docs/guide/loops-and-chains.md). It is not the
// default (Config.Tile 0: off): weighing and scheduling a chain of
// Airfoil's 720 000 cells takes about 0.5–1 s in Go, once per distinct
// chain, which a short run does not earn back.
const TileAuto = exec.TileAuto
