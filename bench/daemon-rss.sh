#!/bin/sh
# Resident memory of a running `mco daemon` at rest (a node Done with 1,000 managed files),
# read from /proc/<pid>/status VmRSS. Target: < 40 MiB. Needs `make tools` (control plane).
set -eu
cd "$(dirname "$0")/.."
MCO_BENCH_RSS=1 go test ./internal/daemon -run TestDaemonRSSAtRest -count=1 -v | grep -E 'RSS|^(ok|FAIL|---)'
