#!/usr/bin/env bash
# The Prometheus Operator's CRDs for PodMonitor and PrometheusRule, from its module on the Go
# module proxy (pinned here, checked against the checksum database as any module is), into
# $1/crds: the e2e suite installs them on a dev cluster to apply README's monitoring overlay
# (config/with-prometheus) as a user with the Prometheus Operator does. Only when the pin changed.
set -euo pipefail
version=v0.90.1
out=${1:?usage: crds.sh TOOLS_DIR}/crds
[ "$(cat "$out/.pin" 2>/dev/null)" = "$version" ] && exit 0
mod=$(cd "$(mktemp -d)" && GOFLAGS=-mod=mod go mod download -json "github.com/prometheus-operator/prometheus-operator@$version")
dir=$(printf '%s\n' "$mod" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -d "$dir" ] || { printf 'crds.sh: no module directory in:\n%s\n' "$mod" >&2; exit 1; }
mkdir -p "$out"
for crd in podmonitors prometheusrules; do
  install -m 0644 "$dir/example/prometheus-operator-crd/monitoring.coreos.com_$crd.yaml" "$out/"
done
echo "$version" > "$out/.pin"
