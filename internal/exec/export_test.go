package exec

// BeforeRun and MayHaveRun export beforeRun and mayHaveRun to the tests.
var (
	BeforeRun  = beforeRun
	MayHaveRun = mayHaveRun
)
