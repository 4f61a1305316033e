// Command migration-evals-supervise runs a test binary for `go test -exec` and reports
// what only a process outside it can see: how many times the binary (or a process it
// started) executed the test binary again, how many programs were executed in all, the
// binary's real exit status, and how many processes it left behind (killed before the
// report, so none can write anything after it).
//
// It traces the binary and every process and thread it starts with ptrace, stopping
// them only at fork, clone, exec and signal delivery. A binary that re-executes itself
// can run its tests in a child and rewrite the child's output, exit status and coverage
// profile as it pleases; what it cannot do is hide the exec from its tracer. The grader
// compares the count with the base commit's (a test that re-runs its own binary as a
// helper process is common and legitimate).
//
// Its last line, printed after the binary and everything it started are gone, is
//
//	migration-evals-supervise: exit=N self-execs=N execs=N leftovers=N
//
// and its exit status is the binary's (128+signal when a signal ended it). A supervisor
// that cannot trace exits 125 and says why.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

const (
	record     = "migration-evals-supervise:"
	exitKill   = 0x100000 // PTRACE_O_EXITKILL: the tracees die with the supervisor
	traceFlags = syscall.PTRACE_O_TRACEEXEC | syscall.PTRACE_O_TRACECLONE |
		syscall.PTRACE_O_TRACEFORK | syscall.PTRACE_O_TRACEVFORK | exitKill
)

type fileID struct{ dev, ino uint64 }

func identity(path string) (fileID, bool) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

type watch struct {
	binary    fileID
	main      int
	live      map[int]bool
	selfExecs int
	execs     int
	exit      int
	mainDone  bool
}

func (w *watch) stopped(pid int, ws syscall.WaitStatus) {
	sig := ws.StopSignal()
	if sig != syscall.SIGTRAP {
		if sig == syscall.SIGSTOP && !w.live[pid] {
			w.live[pid] = true // a new tracee's first stop
			sig = 0
		}
		_ = syscall.PtraceCont(pid, int(sig))
		return
	}
	switch ws.TrapCause() {
	case syscall.PTRACE_EVENT_EXEC:
		w.execs++
		if id, ok := identity(fmt.Sprintf("/proc/%d/exe", pid)); ok && id == w.binary {
			w.selfExecs++
		}
	case syscall.PTRACE_EVENT_CLONE, syscall.PTRACE_EVENT_FORK, syscall.PTRACE_EVENT_VFORK:
		if child, err := syscall.PtraceGetEventMsg(pid); err == nil {
			w.live[int(child)] = w.live[int(child)] // known; its first stop may come later
		}
	}
	_ = syscall.PtraceCont(pid, 0)
}

func (w *watch) ended(pid int, ws syscall.WaitStatus) {
	delete(w.live, pid)
	if pid != w.main {
		return
	}
	w.mainDone = true
	if ws.Exited() {
		w.exit = ws.ExitStatus()
	} else {
		w.exit = 128 + int(ws.Signal())
	}
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: migration-evals-supervise TEST-BINARY [ARGS...]")
		os.Exit(2)
	}
	runtime.LockOSThread() // ptrace requests must come from the tracing thread
	binary, ok := identity(os.Args[1])
	if !ok {
		fmt.Printf("\n%s cannot read %s\n", record, os.Args[1])
		os.Exit(125)
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Ptrace: true}
	if err := cmd.Start(); err != nil {
		fmt.Printf("\n%s cannot trace the test binary: %v\n", record, err)
		os.Exit(125)
	}
	w := &watch{binary: binary, main: cmd.Process.Pid, live: map[int]bool{}}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(w.main, &ws, syscall.WALL, nil); err != nil || !ws.Stopped() {
		fmt.Printf("\n%s the test binary did not start under trace\n", record)
		os.Exit(125)
	}
	w.live[w.main] = true
	if err := syscall.PtraceSetOptions(w.main, traceFlags); err != nil {
		fmt.Printf("\n%s cannot trace the test binary: %v\n", record, err)
		_ = syscall.Kill(w.main, syscall.SIGKILL)
		os.Exit(125)
	}
	_ = syscall.PtraceCont(w.main, 0)
	leftovers := 0
	for {
		pid, err := syscall.Wait4(-1, &ws, syscall.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			break // ECHILD: every tracee is gone
		}
		if ws.Stopped() {
			if w.mainDone {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				_ = syscall.PtraceCont(pid, 0)
				continue
			}
			w.stopped(pid, ws)
			continue
		}
		w.ended(pid, ws)
		if w.mainDone && pid == w.main {
			for other := range w.live {
				leftovers++
				_ = syscall.Kill(other, syscall.SIGKILL)
			}
		}
	}
	fmt.Printf("\n%s exit=%d self-execs=%d execs=%d leftovers=%d\n",
		record, w.exit, w.selfExecs, w.execs, leftovers)
	os.Exit(w.exit)
}
