package device

import "strings"

// Dialect is how a device language spells what the generator writes: the
// generator's structure (staging, colouring, reductions, private copies)
// is the same for every device, and its spellings come from here.
type Dialect struct {
	// Name names the dialect in generated comments and messages.
	Name string
	// Preamble follows the header comment: pragmas and the stdint type
	// names the language lacks.
	Preamble string
	// KernelHead starts the stub's definition, up to its name; %d is the
	// work-group size.
	KernelHead string
	// Global, Local, Constant and Private qualify pointers to device
	// memory, work-group shared memory, constant memory and a work item's
	// own memory.
	Global, Local, Constant, Private string
	// LocalBarrier synchronises a work group's items and its shared
	// memory; GlobalBarrier its view of device memory; BothBarrier both.
	LocalBarrier, GlobalBarrier, BothBarrier string
	// LocalID, GroupID, GlobalID and GlobalSize are the work item's index
	// in its group, the group's index, the item's index in the launch and
	// the number of items launched.
	LocalID, GroupID, GlobalID, GlobalSize string
	// Int64 spells the 64-bit signed integer.
	Int64 string
}

// OpenCL is OpenCL C 1.2.
var OpenCL = &Dialect{
	Name: "opencl",
	Preamble: "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" +
		"typedef char int8_t; typedef uchar uint8_t; typedef short int16_t; typedef ushort uint16_t;\n" +
		"typedef int int32_t; typedef uint uint32_t; typedef long int64_t; typedef ulong uint64_t;\n",
	KernelHead:    "__kernel __attribute__((reqd_work_group_size(%d, 1, 1)))\nvoid",
	Global:        "__global",
	Local:         "__local",
	Constant:      "__constant",
	Private:       "__private",
	LocalBarrier:  "barrier(CLK_LOCAL_MEM_FENCE)",
	GlobalBarrier: "barrier(CLK_GLOBAL_MEM_FENCE)",
	BothBarrier:   "barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE)",
	LocalID:       "get_local_id(0)",
	GroupID:       "get_group_id(0)",
	GlobalID:      "get_global_id(0)",
	GlobalSize:    "get_global_size(0)",
	Int64:         "long",
}

// spell replaces the $words of a generator format string by the dialect's
// spellings.
func (d *Dialect) spell(format string) string {
	if !strings.Contains(format, "$") {
		return format
	}
	return strings.NewReplacer(
		"$globalsize", d.GlobalSize, "$globalid", d.GlobalID, "$global", d.Global,
		"$localid", d.LocalID, "$local", d.Local, "$groupid", d.GroupID,
		"$lbarrier", d.LocalBarrier, "$gbarrier", d.GlobalBarrier, "$bbarrier", d.BothBarrier,
		"$kernel", d.KernelHead,
	).Replace(format)
}
