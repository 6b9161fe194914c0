#!/usr/bin/env bash
# Builds the real binaries tests and the demo run into $1 (default bin/tools).
# The ldflags make the Ignition client usable against a plain directory: selinuxRelabel=false
# stops the files stage from requiring <root>/etc/selinux/config.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:-$here/../../bin/tools}" && cd "${1:-$here/../../bin/tools}" && pwd)
cd "$here"
ign_version=$(go list -m -f '{{.Version}}' github.com/coreos/ignition/v2)
ign_ldflags="-s -w -X github.com/coreos/ignition/v2/internal/version.Raw=${ign_version} -X github.com/coreos/ignition/v2/internal/distro.selinuxRelabel=false"

# Kubernetes binaries built from the module proxy report v0.0.0-master (a Node's kubeletVersion,
# the API server's /version) unless told their version, as Kubernetes' own build does
# (hack/lib/version.sh): gitVersion, and gitMajor/gitMinor from it, the minor marked "+" when the
# version has anything after vX.Y.Z.
k8s_version=$(go list -m -f '{{.Version}}' k8s.io/kubernetes)
k8s_release=${k8s_version#v}
k8s_release=${k8s_release%%[-+]*}
IFS=. read -r k8s_major k8s_minor k8s_patch <<<"$k8s_release"
if ! [[ "$k8s_major" =~ ^[0-9]+$ && "$k8s_minor" =~ ^[0-9]+$ && "$k8s_patch" =~ ^[0-9]+$ ]]; then
  echo "build.sh: k8s.io/kubernetes version $k8s_version is not vMAJOR.MINOR.PATCH[-...]" >&2
  exit 1
fi
[ "v$k8s_release" = "$k8s_version" ] || k8s_minor+="+"
# Without symbols and DWARF (-s -w), as Kubernetes' own non-debug build links them
# (hack/lib/golang.sh): the links of these large binaries take a third of the time (kubelet, warm:
# 9.7 s to 3.0 s), which a cold make tools (and CI's cold run) waits for.
k8s_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  k8s_ldflags+=" -X $pkg.gitVersion=$k8s_version -X $pkg.gitMajor=$k8s_major -X $pkg.gitMinor=$k8s_minor"
done
# One go build for all of them (each binary named after its package's directory): their
# packages compile and link in parallel, where one build after another leaves a core idle on
# each one's link and critical path (a cold make tools is most of a cold CI run's build).
CGO_ENABLED=0 go build -trimpath -ldflags "$k8s_ldflags" -o "$out/" ./kube-apiserver \
  k8s.io/kubernetes/cmd/kubectl k8s.io/kubernetes/cmd/kubelet \
  k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/etcd" ./etcd
# The pod sandbox's process (internal/dev/image.WritePause makes it the pause image): static, so the
# image needs nothing else.
CGO_ENABLED=0 go build -trimpath -ldflags "-s -w" -o "$out/pause" ./pause
# The dev machines' container runtime (its own module, ./containerd): containerd, its runc shim and
# ctr, static, told their version as containerd's own build does (the kubelet reports it on the
# Node, and the agent reads it to decide whether images can be pinned). no_btrfs: no cgo headers.
ctrd_version=$(cd containerd && go list -m -f '{{.Version}}' github.com/containerd/containerd/v2)
(cd containerd && CGO_ENABLED=0 go build -trimpath -tags no_btrfs \
  -ldflags "-s -w -X github.com/containerd/containerd/v2/version.Version=${ctrd_version#v}" -o "$out/" \
  github.com/containerd/containerd/v2/cmd/containerd github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
  github.com/containerd/containerd/v2/cmd/ctr)
CGO_ENABLED=1 go build -trimpath -ldflags "$ign_ldflags" -o "$out/ignition" github.com/coreos/ignition/v2/internal
CGO_ENABLED=1 go build -trimpath -ldflags "$ign_ldflags" -o "$out/ignition-validate" github.com/coreos/ignition/v2/validate
