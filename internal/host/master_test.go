package host

import (
	"errors"
	"sync"
	"syscall"
	"testing"
)

// tidJob records the OS thread it ran on and returns err.
type tidJob struct {
	tid int
	err error
}

func (j *tidJob) RunOnMaster() error {
	j.tid = syscall.Gettid()
	return j.err
}

// TestOnMaster: jobs handed over from many goroutines all run on one OS
// thread, and their errors come back.
func TestOnMaster(t *testing.T) {
	jobs := make([]tidJob, 40)
	jobs[7].err = errors.New("job 7")
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = OnMaster(&jobs[i])
		}()
	}
	wg.Wait()
	for i := range jobs {
		if jobs[i].tid != jobs[0].tid {
			t.Errorf("job %d ran on thread %d, job 0 on %d", i, jobs[i].tid, jobs[0].tid)
		}
		if (errs[i] != nil) != (i == 7) || (i == 7 && errs[i].Error() != "job 7") {
			t.Errorf("job %d: error %v", i, errs[i])
		}
	}
}
