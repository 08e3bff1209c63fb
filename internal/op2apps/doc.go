// Package op2apps holds OP2-Common's small C applications (apps/c: jac1 in
// double, single precision and with 64-bit map indices, jac2, reduction,
// min and aero) written against GoOP2, as checks from outside: the same
// sets, maps, kernels (as OP2 declares them: argument kinds, maps, index
// arguments, Globals and their access) and driver, so that their results
// can be compared with what OP2's own builds print on the same inputs.
//
// Each application is one function returning what the original prints.
// Run alone, it declares the whole mesh; started by an MPI launcher, rank 0
// declares it (or, for jac1/longint, every rank its block, as OP2's
// jac_mpi.cpp does) and the application partitions it with op2.Partition
// before its first loop. Each application declares its own sets, maps and
// constants and removes the constants when it ends, so that several can run
// one after another in one process without MPI; under MPI a process runs one
// (op2.Partition distributes every set declared).
package op2apps
