#!/usr/bin/env bash
# Builds bin/tools only when the pins (go.mod, go.sum, the mains, the build script or the Go
# toolchain) changed since the last build, or a binary is missing. File timestamps are not used:
# a fresh clone has new ones and must not force a 5-minute rebuild of identical binaries.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# Dev and e2e machines are real systemd machines booted from this host's own OS: they need
# systemd and D-Bus in that OS, and mkfs.ext4, mount and nsenter to make and enter them.
need=()
[ -x /lib/systemd/systemd ] || need+=(systemd)
command -v dbus-daemon >/dev/null || need+=(dbus)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
command -v nsenter >/dev/null || need+=(util-linux)
command -v mount >/dev/null || need+=(mount)
# README's install check, which make test runs, asks the server with curl.
command -v curl >/dev/null || need+=(curl)
# The dev network's bridges and routes, and the server guard's namespace test, are made with ip.
command -v ip >/dev/null || need+=(iproute2)
# Their kubelets run pods with containerd, runc and the CNI plugins (bridge, host-local,
# loopback); the kubelet and the bridge plugin write iptables rules. Asked of dpkg, not PATH:
# iptables and the plugins are not on a non-root user's PATH.
for pkg in containerd runc containernetworking-plugins iptables; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing ${need[*]} (dev and e2e machines boot this host's OS with systemd and run pods with containerd)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
  else
    echo "dev machines need: apt-get install ${need[*]}" >&2
    exit 1
  fi
fi
out="$here/../../bin/tools"
"$here/crds.sh" "$out"
pins=$(cd "$here" && { cat go.mod go.sum build.sh ./*/main.go containerd/go.mod containerd/go.sum; go version; } | sha256sum | cut -d' ' -f1)
missing=0
for bin in kube-apiserver kubectl kubelet kube-controller-manager kube-scheduler etcd pause ignition ignition-validate containerd containerd-shim-runc-v2 ctr; do
  [ -x "$out/$bin" ] || missing=1
done
if [ "$missing" = 0 ] && [ "$(cat "$out/.pins" 2>/dev/null)" = "$pins" ]; then
  exit 0
fi
# The Ignition client links libblkid; install its headers when we can (CI and fresh machines run as root).
if ! [ -f /usr/include/blkid/blkid.h ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing libblkid-dev (needed to build the Ignition client)"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libblkid-dev
  else
    echo "the Ignition client needs libblkid headers: apt-get install libblkid-dev" >&2
    exit 1
  fi
fi
echo "building tools into bin/tools (kube-apiserver, kubectl, kubelet, kube-controller-manager, kube-scheduler, etcd, pause, ignition, containerd): 10 to 15 minutes on a cold cache"
"$here/build.sh" "$out"
echo "$pins" > "$out/.pins"
