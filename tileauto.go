package op2

import "github.com/goop2/op2/internal/exec"

// TileAuto is the Config.Tile value (OP2_TILE=auto), the default in one
// process, that lets GoOP2 choose per chain of recorded loops whether
// they run in sparse tiles and of how many elements: tiles where the
// chain's data does not fit the last-level cache and tiles cut the bytes
// it moves, each tile's data sized to half of one CPU's part of the
// last-level cache (see docs/guide/loops-and-chains.md). Config.Tile 0 named with
// Config.Explicit("Tile"), or OP2_TILE=0, turns tiling off.
const TileAuto = exec.TileAuto
