//go:build tools

// Package containerd pins the container runtime the dev cluster's machines run: containerd, its
// runc shim and ctr, built from the module proxy by build.sh. Its own module, so containerd's
// dependencies never move the Kubernetes build's (../go.mod).
package containerd

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)
