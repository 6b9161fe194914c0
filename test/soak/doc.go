// Package soak runs whole-system scenarios many times over, each on a fresh dev cluster, to
// catch what fails once in twenty (`make soak`; not part of `make test`). A round that fails
// leaves the cluster's state under MCO_SOAK_DIR (default $TMPDIR/mco-soak) before its cluster
// is torn down.
package soak
