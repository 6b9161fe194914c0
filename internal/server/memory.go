package server

import (
	"fmt"
	"math"
	"os"

	"k8s.io/apimachinery/pkg/api/resource"
)

// What the Go runtime (heap and goroutine stacks) holds for each open TLS connection serving
// a config, measured with bench/mcs/herd.sh at 1,000 connections: ≈21 MiB of live heap (two
// 4 KiB bufio buffers per connection, the TLS state, a 16 KiB record buffer while a write waits
// for the client to read) and ≈15 MiB of stacks, i.e. ≈37 KiB each, above a base of a few MiB.
const (
	memoryLimitBase          = 16 << 20
	memoryLimitPerConnection = 40 << 10
)

// DefaultMemoryLimit is the soft memory limit (debug.SetMemoryLimit) for a standalone
// server (bootstrap, from-dir) that allows maxConnections per listener: 55 MiB at the default
// 1,000. Without a limit the collector lets the heap grow to twice what is live, so a boot storm
// doubles the memory its connection buffers take; with one it collects as the heap nears the
// limit instead. The limit sits above the working set at the connection cap so the collector
// does not run back to back, and it is soft: should more be live, the heap grows past it.
func DefaultMemoryLimit(maxConnections int) int64 {
	if maxConnections <= 0 {
		maxConnections = DefaultMaxConnections
	}
	return memoryLimitBase + int64(maxConnections)*memoryLimitPerConnection
}

// MemoryLimit reads --memory-limit; ok says whether the caller should apply limit (else the
// runtime's own setting, GOMEMLIMIT or none, stays). "auto" is DefaultMemoryLimit in the
// standalone modes unless GOMEMLIMIT is set, and nothing in cluster mode: there the server
// caches every MachineConfig of the cluster (old rendered ones included), which can outgrow any
// fixed default, and a live heap above the limit would keep the collector running on up to half
// the CPU; size it there with --memory-limit (the caches plus 40Ki per connection). "none" is no
// limit; anything else is a quantity such as 64Mi.
func MemoryLimit(flag string, maxConnections int, clusterMode bool) (limit int64, ok bool, err error) {
	switch flag {
	case "auto", "":
		if _, set := os.LookupEnv("GOMEMLIMIT"); set || clusterMode {
			return 0, false, nil
		}
		return DefaultMemoryLimit(maxConnections), true, nil
	case "none":
		return math.MaxInt64, true, nil
	}
	q, err := resource.ParseQuantity(flag)
	if err != nil || q.Sign() <= 0 {
		return 0, false, fmt.Errorf("--memory-limit %q: want auto, none or a positive quantity such as 64Mi", flag)
	}
	return q.Value(), true, nil
}
