#!/usr/bin/env bash
# make demo: the whole system on this machine. A local cluster with 3 worker nodes, the example
# MachineConfigs rolled out live, then a 4th machine joining the real way. The cluster is left
# running for you to explore.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${DEMO_DIR:-_out/demo}
mco=bin/mco
kubectl=bin/tools/kubectl
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

mkdir -p "$(dirname "$dir")" && chmod o+x "$(dirname "$dir")"  # node roots must be reachable by their core user
if [ -f "$dir/state.json" ]; then
  step "stopping the previous demo cluster in $dir"
  $mco dev down --dir "$dir" || true
fi

step "validate and render the examples offline"
$mco validate examples/ && echo "examples/: valid"
$mco render --pool worker examples/ | grep -E '^  name:|^  kernelArguments:|^  - audit|path: /etc|name: hello'

step "start a local cluster: etcd, kube-apiserver, mco controller, mco server, 3 simulated worker nodes"
$mco dev up --dir "$dir" --nodes 3
export KUBECONFIG=$dir/kubeconfig

step "the cluster before any change"
$mco status

step "apply examples/: a chrony file, a systemd unit, an SSH key for core, a kernel argument (needs a reboot)"
$kubectl apply -f examples/

step "watch the rollout: one node at a time (maxUnavailable 1), drained and rebooted for the kernel argument"
$mco rollout status mcp/worker --timeout 5m

step "what a node has now"
root=$dir/nodes/worker-0/root
echo "--- $root/etc/chrony.conf"; cat "$root/etc/chrony.conf"
echo "--- $root/etc/systemd/system/hello-mco.service (enabled: $(readlink "$root/etc/systemd/system/multi-user.target.wants/hello-mco.service"))"
echo "--- core's SSH keys"; cat "$root/home/core/.ssh/authorized_keys.d/ignition"
echo "--- staged for the next boot"; cat "$root/var/lib/mco-dev/staged-os.json"; echo

step "a 4th machine joins: the real Ignition client boots it from the pool's pointer config"
$mco dev join --dir "$dir" --pool worker
$mco status

abs=$(cd "$dir" && pwd)
cat <<MSG

The cluster keeps running. Try:
  export KUBECONFIG=$abs/kubeconfig
  $(pwd)/$kubectl get mcp,mc,nodes
  $(pwd)/$mco status
  $(pwd)/$kubectl edit mc 50-worker-chrony      # then: $(pwd)/$mco rollout status mcp/worker
Stop it with:
  $(pwd)/$mco dev down --dir $abs
MSG
