// Command testsum reads `go test -json` from its input and prints, as each
// package finishes, its result and how long the run has taken so far; the
// output of every test that fails, as it fails; and at the end a summary
// of the skipped tests grouped by the reason they gave (with -skips=false,
// their number only) and the slowest top-level tests (-slowest, 15 by
// default), so that a suite that grows shows where its time goes. It
// exits 1 when a
// test, a package or a build failed. scripts/test-all pipes its go test
// runs through it, so that a long run shows progress and no skip passes
// unseen:
//
//	go test -json ./... | go run ./scripts/testsum
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json's TestEvent).
type event struct {
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string // build-output and build-fail events
}

type key struct{ pkg, test string }

// summary accumulates what the run printed.
type summary struct {
	out      io.Writer
	start    time.Time
	output   map[key][]string // output of running tests and packages
	skips    []skip
	failed   bool
	packages int
	list     bool // list the skips, not only count them
	// timed holds the top-level tests that ran, with their time.
	timed []timed
}

type timed struct {
	name    string
	elapsed float64
}

type skip struct{ pkg, test, reason string }

func main() {
	list := flag.Bool("skips", true, "list the skipped tests by reason (false: count them)")
	slowest := flag.Int("slowest", 15, "list this many of the slowest top-level tests")
	flag.Parse()
	s := newSummary(os.Stdout)
	s.list = *list
	if err := s.read(os.Stdin); err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	s.printSkips()
	s.printSlowest(*slowest)
	if s.failed {
		os.Exit(1)
	}
}

func newSummary(out io.Writer) *summary {
	return &summary{out: out, start: time.Now(), output: map[key][]string{}}
}

// read handles every line of r; lines that are not JSON events (go vet's,
// or a tool's) are printed as they are.
func (s *summary) read(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			fmt.Fprintf(s.out, "%s\n", line)
			continue
		}
		s.handle(e)
	}
	return sc.Err()
}

func (s *summary) handle(e event) {
	switch e.Action {
	case "build-output":
		fmt.Fprint(s.out, e.Output)
		return
	case "build-fail":
		s.failed = true
		return
	}
	k := key{e.Package, e.Test}
	if e.Test != "" && !strings.Contains(e.Test, "/") && (e.Action == "pass" || e.Action == "fail") {
		s.timed = append(s.timed, timed{e.Package[strings.LastIndex(e.Package, "/")+1:] + "." + e.Test, e.Elapsed})
	}
	switch e.Action {
	case "output":
		s.output[k] = append(s.output[k], e.Output)
	case "skip":
		if e.Test == "" {
			if s.output[k] != nil && !noTests(s.output[k]) {
				s.finish(e, "ok  ")
			}
		} else {
			s.skips = append(s.skips, skip{e.Package, e.Test, reason(s.output[k])})
		}
		delete(s.output, k)
	case "pass":
		if e.Test == "" {
			s.finish(e, "ok  ")
		}
		delete(s.output, k)
	case "fail":
		s.failed = true
		if e.Test == "" {
			s.finish(e, "FAIL")
		} else {
			fmt.Fprintf(s.out, "--- FAIL: %s %s (%.2fs)\n", e.Package, e.Test, e.Elapsed)
			for _, l := range s.output[k] {
				if !strings.HasPrefix(l, "=== ") {
					fmt.Fprint(s.out, l)
				}
			}
		}
		delete(s.output, k)
	}
}

// finish prints a package's result line, with its own output (a panic,
// a timeout, FAIL lines) when it failed.
func (s *summary) finish(e event, verdict string) {
	s.packages++
	k := key{e.Package, ""}
	if verdict == "FAIL" {
		for _, l := range s.output[k] {
			if l != "FAIL\n" && !strings.HasPrefix(l, "FAIL\t") && !strings.HasPrefix(l, "ok  \t") {
				fmt.Fprint(s.out, l)
			}
		}
	}
	fmt.Fprintf(s.out, "%s %-55s %8.1fs   [%s into the run]\n", verdict, e.Package, e.Elapsed, time.Since(s.start).Round(time.Second))
	delete(s.output, k)
}

func noTests(lines []string) bool {
	for _, l := range lines {
		if strings.Contains(l, "[no test files]") {
			return true
		}
	}
	return false
}

// position is the "file.go:12: " a t.Skip message starts with.
var position = regexp.MustCompile(`^\s*[\w.-]+\.go:\d+: `)

// reason is the message a skipped test gave: its output less the framing
// lines, without the file:line prefix.
func reason(lines []string) string {
	var msg []string
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, position.ReplaceAllString(strings.TrimRight(l, "\n"), ""))
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.TrimSpace(strings.Join(msg, " / "))
}

// printSkips prints the skipped tests, grouped by reason (most first),
// naming up to five tests of each group.
func (s *summary) printSkips() {
	fmt.Fprintf(s.out, "== %d packages in %s\n", s.packages, time.Since(s.start).Round(time.Second))
	if len(s.skips) == 0 {
		fmt.Fprintln(s.out, "== no test skipped")
		return
	}
	if !s.list {
		fmt.Fprintf(s.out, "== %d tests skipped\n", len(s.skips))
		return
	}
	groups := map[string][]string{}
	for _, k := range s.skips {
		pkg := k.pkg[strings.LastIndex(k.pkg, "/")+1:]
		groups[k.reason] = append(groups[k.reason], pkg+"."+k.test)
	}
	reasons := make([]string, 0, len(groups))
	for r := range groups {
		reasons = append(reasons, r)
	}
	slices.SortFunc(reasons, func(a, b string) int {
		if d := len(groups[b]) - len(groups[a]); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	fmt.Fprintf(s.out, "== %d tests skipped, for %d reasons:\n", len(s.skips), len(reasons))
	for _, r := range reasons {
		tests := groups[r]
		shown := tests[:min(5, len(tests))]
		more := ""
		if len(tests) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(tests)-len(shown))
		}
		if len(r) > 300 {
			r = r[:300] + "…"
		}
		fmt.Fprintf(s.out, "%5d× %s\n       %s%s\n", len(tests), r, strings.Join(shown, ", "), more)
	}
}

// printSlowest prints the n slowest top-level tests (their subtests'
// time included).
func (s *summary) printSlowest(n int) {
	if n <= 0 || len(s.timed) == 0 {
		return
	}
	slices.SortStableFunc(s.timed, func(a, b timed) int { return cmp.Compare(b.elapsed, a.elapsed) })
	total := 0.0
	for _, t := range s.timed {
		total += t.elapsed
	}
	shown := s.timed[:min(n, len(s.timed))]
	fmt.Fprintf(s.out, "== the %d slowest of %d tests (%.0fs of tests in all):\n", len(shown), len(s.timed), total)
	for _, t := range shown {
		fmt.Fprintf(s.out, "%8.1fs %s\n", t.elapsed, t.name)
	}
}
