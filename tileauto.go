package op2

import "github.com/goop2/op2/internal/exec"

// TileAuto is the Config.Tile value (OP2_TILE=auto) that lets GoOP2,
// in one process, choose per chain of recorded loops whether
// they run in sparse tiles and of how many elements: tiles where the
// chain's data does not fit the last-level cache and tiles cut the bytes
// it moves, each tile's data sized to half of one CPU's part of the
// last-level cache (see docs/guide/loops-and-chains.md). On one thread
// (sequential, or openmp with one thread) tiles give the results of
// running each loop at once bit for bit, and a chain's schedule is
// computed in the background, the loops running untiled until it is
// ready; each chain then runs untiled and in tiles of two sizes in turn,
// timed, and keeps the fastest way (tiles only if they were as fast). It is the default on one thread
// (Config.Tile left zero, OP2_TILE unset, with the sequential backend or
// Threads 1; Config{}.Explicit("Tile") turns tiling off): tiles cut the
// bytes moved, but on the machines measured so far not always the time.
const TileAuto = exec.TileAuto
