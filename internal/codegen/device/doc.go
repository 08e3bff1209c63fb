// Package device generates the code that runs a loop on a device: the
// user's kernel made a device function, and a stub that stages indirect
// data in local memory per block, runs the elements thread colour by thread
// colour, and reduces Globals per work group. Analyse works out a loop's
// Layout (from its core.Signature and the device's local memory); Generate
// writes the source. It is pure Go: no cgo, no driver, no device, so
// source can be generated anywhere (static generation).
//
// The output today is OpenCL C 1.2; the OpenCL spellings are still written
// in the generator's format strings. Making them a dialect value, so that
// the same generator writes CUDA C, is the next step (issue 9 item 3).
package device
