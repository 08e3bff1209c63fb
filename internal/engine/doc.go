// Package engine is the machinery under the op2 API: it binds a loop's
// pieces into a core.Loop, runs it now or records it, and owns everything
// the runtimes of a process share. The op2 package makes the user's
// objects and hands them over; internal/exec runs a bound loop.
//
// # One value for the process
//
// Process is the state every runtime shares, one value per process (the
// op2 package embeds it in its own): the lock that serialises loops and
// host access to data, the queue of recorded loops with fusion and
// tiling, the crash report's view of the running loop, the declared
// mesh (for Partition and Renumber), and the MPI world and job. Runtime
// is one op2.Runtime's engine: configuration, open backends, executor,
// timings and logger.
//
// # The lock
//
// Process.Lock is the only way to take the lock. Its Mode says what
// happens to the recorded loops: ForNoData keeps them (the caller
// touches no data a loop can change), ForData runs them first and
// returns their failure, ForStatus runs them and keeps a failure for the
// next forcing call, ForCollective runs them at a point every MPI rank
// reaches, ForStorage(s) runs them for an accessor of one Dat or Global,
// refusing a chain's loops on several ranks (those lazy mode records
// there send nothing, and run: chain_mpi.go). The op2 package's tests
// check that every
// exported function takes the lock in the mode it must.
//
// # The path of a loop
//
//  1. Process.Bind checks the arguments (Arg, one per argument; each
//     kind of argument is one type in arg_*.go with its rules) against
//     the kernel's parameters and the iteration set, and fills the
//     core.Loop, changing nothing else. Failures are *op2.LoopError,
//     made through API, the interface by which the op2 package makes its
//     exported errors. Before, Process.ExpandMixed replaces mixed
//     arguments by their blocks' (mixed.go); after, RestrictToSubset
//     turns a loop over a set into one over a subset's elements
//     (subset.go).
//  2. Runtime.Run forces other runtimes' recorded loops and calls
//     RunProgram: under MPI the ranks agree on the loop, check mode
//     snapshots its READ arguments (check.go), the crash report names it,
//     and exec.Executor.RunProgram runs it. Or, while Runtime.Recording,
//     Runtime.Commit builds its program and queues it (queue.go); the
//     queue runs when a forcing Lock is taken, fused (internal/fuse) or
//     in sparse tiles (tile.go) where the configuration says so, with
//     one halo plan per chain on several ranks (chain_mpi.go).
//
// Nothing here allocates for a loop that repeats: the bound loop, the
// queue's slots and the tiling buffers are reused.
//
// # Checkpoints
//
// A loop that runs at once goes through Runtime.RunNow, which passes it
// to the automatic checkpoints (autockpt.go; op2.Config.Checkpoint of
// the Default runtime): it may be skipped on a restart, or a checkpoint
// written or restored before it, and the Globals it reduced are logged.
// The API's functions that bring data to the host tell them first
// (HostRead, HostWrote, HostProduct, HostReadAll). Runtime.Checkpoint and
// Restore list what a checkpoint holds; internal/checkpoint writes and
// reads the file.
package engine
