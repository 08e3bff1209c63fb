package regfile

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRemoveOnSignal: a program that calls RemoveOnSignal and is stopped
// by SIGINT, SIGTERM or SIGHUP while it writes (a Pending write, a path
// Track registered) leaves neither file, and dies of the signal; a
// committed file and a path forgotten stay. A signal this test was
// started ignoring (SIGHUP under nohup), which its child inherits, stays
// ignored: the child lives on and removes nothing.
func TestRemoveOnSignal(t *testing.T) {
	if dir := os.Getenv("REGFILE_TEST_SIGNAL_DIR"); dir != "" {
		RemoveOnSignal()
		p, err := Create(filepath.Join(dir, "out.txt"))
		if err == nil {
			_, err = p.Write([]byte("half"))
		}
		done, derr := Create(filepath.Join(dir, "done.txt"))
		if derr == nil {
			derr = done.Commit()
		}
		partial := filepath.Join(dir, "ck.partial")
		Track(partial)
		kept := filepath.Join(dir, "kept.partial")
		forget := Track(kept)
		for _, f := range []string{partial, kept} {
			if werr := os.WriteFile(f, []byte("x"), 0o644); err == nil {
				err = werr
			}
		}
		forget()
		if err = errors.Join(err, derr); err != nil {
			fmt.Println("error:", err)
			os.Exit(3)
		}
		fmt.Println("ready")
		time.Sleep(time.Minute)
		os.Exit(4)
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run=^TestRemoveOnSignal$")
			cmd.Env = append(os.Environ(), "REGFILE_TEST_SIGNAL_DIR="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			line, _ := bufio.NewReader(out).ReadString('\n')
			if line != "ready\n" {
				cmd.Process.Kill()
				cmd.Wait()
				t.Fatalf("the program said %q", line)
			}
			cmd.Process.Signal(sig)
			if signal.Ignored(sig) {
				ended := make(chan error, 1)
				go func() { ended <- cmd.Wait() }()
				select {
				case err := <-ended:
					t.Errorf("%v, which the program was started ignoring, ended it: %v", sig, err)
				case <-time.After(500 * time.Millisecond):
					cmd.Process.Kill()
					<-ended
				}
				if left, _ := filepath.Glob(filepath.Join(dir, ".out.txt.*.tmp")); len(left) != 1 {
					t.Errorf("%v ignored: temporary files %q, want the write's one", sig, left)
				}
				return
			}
			err = cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != sig {
				t.Errorf("the program ended with %v, want death by %v", err, sig)
			}
			left, _ := filepath.Glob(filepath.Join(dir, "*"))
			hidden, _ := filepath.Glob(filepath.Join(dir, ".*"))
			left = append(left, hidden...)
			want := map[string]bool{filepath.Join(dir, "done.txt"): true, filepath.Join(dir, "kept.partial"): true}
			for _, f := range left {
				if !want[f] {
					t.Errorf("%s left behind", filepath.Base(f))
				}
				delete(want, f)
			}
			for f := range want {
				t.Errorf("%s removed", filepath.Base(f))
			}
		})
	}
}
