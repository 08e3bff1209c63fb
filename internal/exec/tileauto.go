package exec

import (
	"fmt"
	"strconv"
	"strings"
)

// TileAuto is the Config.Tile value (OP2_TILE=auto) that
// lets the engine choose, chain by chain, whether recorded loops run in
// sparse tiles and how large the tiles are (package tile's Auto).
const TileAuto = -1

// parseTile reads OP2_TILE: "auto" (TileAuto), 0 or "off" (off) or a
// tile size.
func parseTile(env, v string) (int, error) {
	switch v := strings.TrimSpace(v); {
	case strings.EqualFold(v, "auto"):
		return TileAuto, nil
	case strings.EqualFold(v, "off"):
		return 0, nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%q is not a non-negative integer or \"auto\"", env, v)
	}
	return n, nil
}

// checkTile checks a Config.Tile a program set: TileAuto, 0 (off) or a
// tile size.
func checkTile(field string, v int) error {
	if v < TileAuto {
		return fmt.Errorf("%s = %d: want a tile size (elements of the first loop's set), 0 for off, or TileAuto (-1)", field, v)
	}
	return nil
}
