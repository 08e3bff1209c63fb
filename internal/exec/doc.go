// Package exec runs parallel loops: it holds the backend contract, the
// registry of backends, the run-time configuration, and the Executor, the
// one place where the per-loop sequence exists.
//
// # The path of a loop
//
// The op2 package checks a loop's arguments and hands the bound loop
// (core.Loop) to Executor.Run, which:
//
//  1. computes the key of the loop's shape (core.AppendKey, no allocation)
//     and finds the program built for that shape on this backend instance;
//     the first time, it analyses the shape once (core.Analyse, giving
//     l.Sig) and asks the backend to Build the program;
//  2. if the program runs by blocks (PlanNeeds is not nil), finds the
//     execution plan for the loop's set and maps, or builds it with the
//     block-size policy (ChoosePlan) and keeps it until the set or a map is
//     garbage collected;
//  3. saves every argument's data state;
//  4. calls Bind, then Launch for the core part of the loop (elements that
//     need no halo data, or the plan colours holding only core blocks) and
//     for the rest, then Finish;
//  5. if Bind or the first Launch fails, puts every data state back and
//     frees device buffers the loop allocated, so a failed loop changes
//     nothing.
//
// # Writing a backend
//
// A backend registers an Opener under its name (Register, from an init
// function). The opened Backend generates source for a loop's signature
// (Generate) and builds a Program from it (Build). A Program:
//
//   - Bind: makes the data current where it runs (core.Storage.HostAccess
//     for host code, DeviceAccess for a device), stores data, map and plan
//     addresses and constants, and remembers the loop until Finish;
//   - Launch: runs one Range (elements, or block colours of the plan);
//     reductions accumulate over the launches of a loop;
//   - Finish: leaves reduction results in the Globals' host values, folding
//     partial results in a fixed order so results do not depend on timing.
//
// A backend must not cache plans, undo data states, or choose which
// elements run: the executor does those for every backend, which is what
// lets MPI (halo exchanges between the core and the rest) and new devices
// be added once. Programs that hold memory outside Go implement Releaser;
// the executor calls Release when it drops them. Backends that run
// asynchronously implement Waiter. Backends whose programs can be compiled
// on another goroutine implement BackgroundBuilder, for the programs that
// only make loops faster (ProgramSoon, TileProgramSoon; background.go).
package exec
