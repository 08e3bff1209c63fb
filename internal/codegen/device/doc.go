// Package device generates the code that runs a loop on a device: the
// user's kernel made a device function, and a stub that stages indirect
// data in local memory per block, runs the elements thread colour by thread
// colour, and reduces Globals per work group. Analyse works out a loop's
// Layout (from its core.Signature, the dialect and the device's local
// memory, and the Options: scheme, layout, work-group size, and the
// device's constant memory, beyond which the constants are read from
// read-only device memory); Generate writes the source. It is pure Go: no
// cgo, no driver, no device, so source can be generated anywhere (static
// generation).
//
// Spellings are data: a Dialect value holds how a device language writes
// address spaces, barriers, work-item ids, the kernel head and the
// preamble, and the generator's format strings name them as $words
// (writer.p). OpenCL (OpenCL C 1.2) is the dialect today; a CUDA dialect
// is another value of the same type.
package device
