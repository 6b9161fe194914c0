#!/usr/bin/env bash
# Builds the real binaries tests and the demo run into $1 (default bin/tools).
# The ldflags make the Ignition client usable against a plain directory: selinuxRelabel=false
# stops the files stage from requiring <root>/etc/selinux/config.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../../bin/tools}" && cd "${1:-$here/../../bin/tools}" && pwd)
cd "$here"
ign_version=$(go list -m -f '{{.Version}}' github.com/coreos/ignition/v2)
ign_ldflags="-X github.com/coreos/ignition/v2/internal/version.Raw=${ign_version} -X github.com/coreos/ignition/v2/internal/distro.selinuxRelabel=false"

CGO_ENABLED=0 go build -trimpath -o "$out/kube-apiserver" ./kube-apiserver
CGO_ENABLED=0 go build -trimpath -o "$out/etcd" ./etcd
CGO_ENABLED=0 go build -trimpath -o "$out/kubectl" k8s.io/kubernetes/cmd/kubectl
CGO_ENABLED=1 go build -trimpath -ldflags "$ign_ldflags" -o "$out/ignition" github.com/coreos/ignition/v2/internal
CGO_ENABLED=1 go build -trimpath -ldflags "$ign_ldflags" -o "$out/ignition-validate" github.com/coreos/ignition/v2/validate
