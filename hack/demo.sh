#!/usr/bin/env bash
# make demo: what mco does today, end to end on this machine. Grows with each capability.
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "the mco binary"
bin/mco version

step "validate the example MachineConfigs (silent on success)"
bin/mco validate examples/ && echo "examples/: valid"

step "render the worker pool offline: one content-addressed MachineConfig"
bin/mco render --pool worker examples/ | grep -E '^  name:|kernelArguments:|^  - |path:|name: .*\.service'

step "the same, as the Ignition a spec 3.2 client would get"
bin/mco render --pool worker --ignition --spec-version 3.2.0 examples/ | head -c 400; echo ' ...'

step "bad input is named precisely, and nothing is rendered"
bad=$(mktemp -d)
trap 'rm -rf "$bad"' EXIT
cat > "$bad/99-bad.yaml" <<'YAML'
apiVersion: machineconfiguration.openshift.io/v1
kind: MachineConfig
metadata:
  name: 99-worker-bad
  labels: {machineconfiguration.openshift.io/role: worker}
spec:
  config:
    ignition: {version: 3.4.0}
    storage:
      files:
      - {path: /etc/setuid-tool, mode: 2541, contents: {source: "data:,x"}}
YAML
bin/mco validate examples/ "$bad" || echo "(exit code $?)"

step "a real kube-apiserver + etcd with OpenShift's CRDs: kubectl get mcp shows OpenShift's columns"
go test ./test/integration -run 'TestMachineConfigAndPoolRoundTrip' -count=1 -v 2>&1 | grep -E '^(--- |ok|FAIL)|NAME|worker ' || true

step "the render controller against that apiserver: render, change, revert, invalid MC, GC"
go test ./internal/controller/render -count=1 -v 2>&1 | grep -E '^(--- |ok|FAIL)' || true
