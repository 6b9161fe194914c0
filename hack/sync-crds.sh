#!/usr/bin/env bash
# Copies the CRD manifests listed in hack/crds.txt from the pinned github.com/openshift/api
# module into config/crd/. internal/crds' test fails when the copies drift from the module.
set -euo pipefail
cd "$(dirname "$0")/.."
src=$(go list -m -f '{{.Dir}}' github.com/openshift/api)
[ -n "$src" ] || { go mod download github.com/openshift/api; src=$(go list -m -f '{{.Dir}}' github.com/openshift/api); }
rm -f config/crd/*.yaml  # crd.go, the embedding package, stays
grep -v '^#' hack/crds.txt | while read -r path; do
  [ -n "$path" ] || continue
  install -m 0644 "$src/$path" "config/crd/$(basename "$path")"
done
echo "copied $(ls config/crd/*.yaml | wc -l) CRDs from $src"
