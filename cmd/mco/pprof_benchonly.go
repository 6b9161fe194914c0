//go:build mcopprof

package main

// Built only with -tags mcopprof (bench/mcs/run.sh --pprof): serves net/http/pprof on
// $MCO_PPROF_ADDRESS so the load test can profile the server under load. Never part of the
// shipped binary: pprof exposes heap contents (tokens, the bootstrap kubeconfig).

import (
	"net"
	"net/http"
	_ "net/http/pprof" // registers /debug/pprof/ on http.DefaultServeMux
	"os"
)

func init() {
	addr := os.Getenv("MCO_PPROF_ADDRESS")
	if addr == "" {
		return
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || !net.ParseIP(host).IsLoopback() {
		panic("MCO_PPROF_ADDRESS must be a loopback host:port")
	}
	go func() { _ = http.ListenAndServe(addr, nil) }()
}
