#!/usr/bin/env bash
# make demo: what mco does today, end to end on this machine. Grows with each capability.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "the mco binary"
bin/mco version

step "a real kube-apiserver + etcd with OpenShift's CRDs: MachineConfig and pool round trip, kubectl get mcp"
go test ./test/integration -run 'TestMachineConfigAndPoolRoundTrip' -count=1 -v 2>&1 | grep -E '^(=== RUN|--- |\s+api_test|ok|FAIL|PASS)|kubectl|NAME|worker' || true
