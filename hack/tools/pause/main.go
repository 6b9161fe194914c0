// Command pause is the process of a pod's sandbox, the image containerd's sandbox_image names:
// it holds the pod's namespaces while the pod lives. It does what Kubernetes' own pause
// (build/pause/linux/pause.c) does: exits 0 on SIGTERM or SIGINT, the kubelet's way of ending a
// pod, and, as PID 1 of a pod that shares its PID namespace, reaps every orphan of the pod's
// processes the kernel hands it, so that none stays a zombie. Ours is Go so that `make tools`
// builds it like every other tool: no registry is reachable to pull registry.k8s.io/pause.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		os.Stderr.WriteString("pause: warning: not PID 1, so orphans are not handed to it to reap\n")
	}
	// Two channels: signal.Notify drops a signal when the channel is full, and a SIGTERM must
	// never be lost behind a pending SIGCHLD. A dropped SIGCHLD loses nothing: reap takes every
	// exited child at once.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	child := make(chan os.Signal, 1)
	signal.Notify(child, syscall.SIGCHLD)
	// Children that exited before Notify sent no SIGCHLD we saw.
	reap()
	for {
		select {
		case s := <-stop:
			os.Stderr.WriteString("pause: shutting down, got signal " + s.String() + "\n")
			os.Exit(0)
		case <-child:
			reap()
		}
	}
}

// reap collects every child that has exited and returns how many. The kernel merges SIGCHLDs
// that arrive together into one, so one signal may stand for many children: wait until none is
// left rather than once per signal.
func reap() int {
	n := 0
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		// pid 0: children remain, none has exited; ECHILD: no children at all.
		if err != nil || pid <= 0 {
			return n
		}
		n++
	}
}
