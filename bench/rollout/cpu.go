package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// cpuTimes is the CPU time (user + system) each process of the benchmark used so far, by name:
// this process (the simulated agents and the benchmark's polling), its children (the
// controller, kube-apiserver, etcd).
type cpuTimes map[string]time.Duration

// benchProcess names this process among the ones whose CPU time is shown.
const benchProcess = "bench (agents)"

// clockTick is USER_HZ, the unit of /proc/PID/stat's times (100 on every Linux port Go runs on).
const clockTick = 10 * time.Millisecond

func readCPU() cpuTimes {
	self := os.Getpid()
	out := cpuTimes{benchProcess: procCPU(self)}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, path := range stats {
		name, ppid, cpu, ok := procStat(path)
		if ok && ppid == self {
			out[name] += cpu
		}
	}
	return out
}

func procCPU(pid int) time.Duration {
	_, _, cpu, _ := procStat(fmt.Sprintf("/proc/%d/stat", pid))
	return cpu
}

// procStat reads a process's command name, parent and CPU time from /proc/PID/stat.
func procStat(path string) (name string, ppid int, cpu time.Duration, ok bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", 0, 0, false
	}
	s := string(data)
	open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || end < open {
		return "", 0, 0, false
	}
	// After the name: state ppid ... utime(14) stime(15), counting from pid as field 1.
	fields := strings.Fields(s[end+1:])
	if len(fields) < 13 {
		return "", 0, 0, false
	}
	ppid, _ = strconv.Atoi(fields[1])
	utime, _ := strconv.ParseInt(fields[11], 10, 64)
	stime, _ := strconv.ParseInt(fields[12], 10, 64)
	return s[open+1 : end], ppid, time.Duration(utime+stime) * clockTick, true
}

// print shows each process's CPU time since before, the share of the machine's CPU time over
// elapsed that all of them used, and the rollout's CPU floor: all of it spread over every core,
// the shortest the rollout could have taken on this machine had nothing else run and no
// process waited for another. The controller's share of kube-apiserver's is the figure that
// holds on a machine others load too.
func (c cpuTimes) print(before cpuTimes, elapsed time.Duration) {
	names := make([]string, 0, len(c))
	var total time.Duration
	for name, t := range c {
		names = append(names, name)
		total += t - before[name]
	}
	slices.SortFunc(names, func(a, b string) int { return int((c[b] - before[b]) - (c[a] - before[a])) })
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %.2fs", name, (c[name] - before[name]).Seconds())
	}
	cores := float64(runtime.NumCPU())
	fmt.Printf("  CPU during the rollout:          %s; %.0f%% of %d cores\n", strings.Join(parts, ", "),
		100*total.Seconds()/(elapsed.Seconds()*cores), runtime.NumCPU())
	fmt.Printf("  CPU floor (all of it / cores):   %.1fs; controller / kube-apiserver CPU: %.3f\n",
		total.Seconds()/cores, share(c, before, "kube-apiserver"))
}

// share is the CPU time the controller (the child that is neither kube-apiserver, etcd nor
// this process) used, over the named process's; 0 when that used none.
func share(c, before cpuTimes, of string) float64 {
	base := (c[of] - before[of]).Seconds()
	if base == 0 {
		return 0
	}
	var controller time.Duration
	for name, t := range c {
		if name != of && name != "etcd" && name != benchProcess {
			controller += t - before[name]
		}
	}
	return controller.Seconds() / base
}

// profileAPIServer writes a CPU profile of the API server over the next seconds to path
// (kube-apiserver serves /debug/pprof by default; `go tool pprof -top path` reads it).
func profileAPIServer(ctx context.Context, cfg *rest.Config, seconds int, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			done <- err
			return
		}
		body, err := cs.RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(seconds)).Timeout(time.Duration(seconds+30) * time.Second).DoRaw(ctx)
		if err == nil {
			err = os.WriteFile(path, body, 0o644)
		}
		done <- err
	}()
	return done
}

// profileURL writes the CPU profile a net/http/pprof server at base takes over seconds to path.
func profileURL(ctx context.Context, base string, seconds int, path string) <-chan error {
	return fetchProfile(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", base, seconds), path)
}

// heapProfile writes the heap profile of a net/http/pprof server at base to path, after a
// GC, so it shows what is live (`go tool pprof -sample_index=inuse_space -top path`).
func heapProfile(ctx context.Context, base, path string) error {
	return <-fetchProfile(ctx, base+"/debug/pprof/heap?gc=1", path)
}

func fetchProfile(ctx context.Context, url, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			done <- err
			return
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			done <- err
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("%s: %s", req.URL, resp.Status)
		}
		if err == nil {
			err = os.WriteFile(path, body, 0o644)
		}
		done <- err
	}()
	return done
}
