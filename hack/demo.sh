#!/usr/bin/env bash
# make demo: the whole system on this host. A local cluster with 3 real systemd worker machines,
# the example MachineConfigs rolled out live (drains and real reboots), then a 4th machine joining
# the real way. The cluster is left running for you to explore. Needs root.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${DEMO_DIR:-_out/demo}
# Machine roots must be reachable by their core user (Ignition becomes core to write its SSH
# keys). A checkout under a directory others cannot enter (mktemp -d makes 0700 ones) cannot hold
# them, so the demo cluster then lives in /var/tmp instead of failing.
if [ -z "${DEMO_DIR:-}" ]; then
  p=$(pwd)
  while [ "$p" != / ]; do
    if (( (8#$(stat -c %a "$p") & 1) == 0 )); then
      echo "note: $p is not reachable by other users (mode $(stat -c %a "$p")); the demo cluster lives in /var/tmp/mco-demo"
      dir=/var/tmp/mco-demo
      break
    fi
    p=$(dirname "$p")
  done
fi
mco=bin/mco
kubectl=bin/tools/kubectl
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

[ "$(id -u)" = 0 ] || { echo "make demo boots real machines (namespaces, loop mounts): run it as root" >&2; exit 1; }
mkdir -p "$(dirname "$dir")" && chmod o+x "$(dirname "$dir")"  # machine roots must be reachable by their core user
if [ -f "$dir/state.json" ]; then
  step "stopping the previous demo cluster in $dir"
  $mco dev down --dir "$dir" || true
fi

step "validate and render the examples offline"
$mco validate examples/ && echo "examples/: valid"
$mco render --pool worker examples/ | grep -E '^  name:|^  kernelArguments:|^  - audit|path: /etc|name: hello'

step "start a local cluster: etcd, kube-apiserver, kube-controller-manager, kube-scheduler; mco installed from its image (config/default); a control-plane machine master-0 booted by a bootstrap mco on this host, which then hands over to mco's pods on master-0; 3 worker machines booted from those pods; every machine a real systemd machine with a real kubelet and containerd"
$mco dev up --dir "$dir" --nodes 3
export KUBECONFIG=$dir/kubeconfig
echo "--- each kubelet joined with the served bootstrap token and a certificate request the controller-manager approved:"
$kubectl get csr -o custom-columns=NAME:.metadata.name,REQUESTOR:.spec.username,SIGNER:.spec.signerName,CONDITION:.status.conditions[0].type
$kubectl get nodes -o wide

step "a workload: 2 replicas spread over the workers, a disruption budget that keeps one available"
$kubectl apply -f - <<'YAML'
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      affinity:
        podAntiAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
          - {labelSelector: {matchLabels: {app: web}}, topologyKey: kubernetes.io/hostname}
      containers:
      - {name: pause, image: registry.k8s.io/pause:3.10, imagePullPolicy: Never}
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: default}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
YAML
$kubectl rollout status deployment/web --timeout 2m
$kubectl get pods -o wide

step "the cluster before any change"
$mco status
$mco dev status --dir "$dir" | sed -n '/^MACHINE/,/^$/p'
echo "--- inside worker-0: PID 1, the node units, the kernel command line"
$mco dev exec --dir "$dir" worker-0 -- sh -c 'echo "PID 1: $(cat /proc/1/comm)"; systemctl is-active containerd.service kubelet.service | paste -sd" "; echo "agent: $(tr "\\0" " " < /proc/$(pgrep -f "^/usr/bin/mco-node daemon" | head -1)/cmdline)"; cat /proc/cmdline'
echo "--- mco's pods (config/default, from mco's own image): the controller and the server on master-0, an agent on every machine; no mco process runs on this host:"
$kubectl get pods -n openshift-machine-config-operator -o wide
echo "--- this host's own processes: the control plane and a supervisor per machine (the bootstrap controller and server stopped at the hand-over; their logs: $dir/logs/bootstrap-*.log):"
$mco dev status --dir "$dir" | sed -n '/^PROCESS/,$p'

step "apply examples/: a chrony file, a systemd unit, an SSH key for core, a kernel argument (needs a reboot)"
$kubectl apply -f examples/

step "watch the rollout: one machine at a time (maxUnavailable 1), cordoned, drained, applied, rebooted for real and back"
$mco rollout status mcp/worker --timeout 5m

echo "--- the workload was drained off each machine in turn and came back (new pods, never fewer than one ready):"
$kubectl get pods -o wide

step "what a machine has now (mco dev exec runs commands inside it)"
x() { $mco dev exec --dir "$dir" worker-0 -- "$@"; }
echo "--- /etc/chrony.conf"; x cat /etc/chrony.conf
echo "--- hello-mco.service: $(x systemctl is-active hello-mco.service), $(x systemctl is-enabled hello-mco.service)"
echo "--- core's SSH keys"; x cat /home/core/.ssh/authorized_keys.d/ignition
echo "--- the kernel command line it booted with"; x cat /proc/cmdline
$mco dev status --dir "$dir" | sed -n '/^MACHINE/,/^$/p'

step "a 4th machine joins: the real Ignition client boots it from the pool's pointer config"
$mco dev join --dir "$dir" --pool worker
echo "--- its kubelet joined as every node does: the served bootstrap token, then its own certificate through a request the controller-manager approved:"
$kubectl get csr --sort-by=.metadata.creationTimestamp -o custom-columns=NAME:.metadata.name,REQUESTOR:.spec.username,CONDITION:.status.conditions[0].type | tail -1
$mco status
echo "--- worker-3 booted, applied the kernel argument in its first-boot service, rebooted once, then reported Done:"
$mco dev exec --dir "$dir" worker-3 -- cat /proc/cmdline
$mco dev status --dir "$dir" | sed -n '/^MACHINE/,/^$/p' 

step "pods are kept off the Machine Config Server: a pod on worker-0 is refused at the node, a host-network pod (the node itself) is not"
master_ip=$($kubectl get node master-0 -o jsonpath='{.status.addresses[?(@.type=="InternalIP")].address}')
image=$($kubectl -n openshift-machine-config-operator get daemonset mco-daemon -o jsonpath='{.spec.template.spec.containers[0].image}')
# probe NAME HOSTNETWORK: openssl s_client (in mco's image) to the server on master-0, from worker-0.
probe() {
  $kubectl run "$1" --image="$image" --image-pull-policy=Never --restart=Never \
    --overrides="{\"spec\":{\"nodeName\":\"worker-0\",\"hostNetwork\":$2}}" \
    --command -- openssl s_client -connect "$master_ip:22623" -brief >/dev/null
  for _ in $(seq 60); do
    case $($kubectl get pod "$1" -o jsonpath='{.status.phase}') in Succeeded|Failed) break ;; esac
    sleep 1
  done
  $kubectl logs "$1" | awk '/Connection refused/ {print "    connection refused (a TCP reset from the node)"; exit} /CONNECTION ESTABLISHED|Protocol version/ {print "    " $0}'
  $kubectl delete pod "$1" --wait=false >/dev/null
}
echo "--- a pod (its own network) to $master_ip:22623:"; probe mcs-probe-pod false
echo "--- a host-network pod on the same machine:"; probe mcs-probe-host true
echo "--- the agent's rules on the node (nftables table inet mco-server-guard), in its log:"
$kubectl logs -n openshift-machine-config-operator daemonset/mco-daemon | grep -m1 "kept off" || true

abs=$(cd "$dir" && pwd)
cat <<MSG

The cluster keeps running. Try:
  export KUBECONFIG=$abs/kubeconfig
  $(pwd)/$kubectl get mcp,mc,nodes
  $(pwd)/$mco status
  $(pwd)/$kubectl logs -n openshift-machine-config-operator daemonset/mco-daemon --tail 20
  $(pwd)/$kubectl edit mc 50-worker-chrony      # then: $(pwd)/$mco rollout status mcp/worker
Stop it with:
  $(pwd)/$mco dev down --dir $abs
MSG
