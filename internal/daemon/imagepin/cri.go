package imagepin

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// CRI is the node's container runtime as the kubelet talks to it: the agent pulls through it, so
// a pull uses the runtime's own registry configuration (mirrors, certificates: the files mco
// writes) and lands where the kubelet finds it.
type CRI struct {
	conn   *grpc.ClientConn
	images runtimeapi.ImageServiceClient
	rt     runtimeapi.RuntimeServiceClient
}

// DialCRI connects to the runtime's socket (a path; on the node, under the agent's root).
func DialCRI(socket string) (*CRI, error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(16<<20)))
	if err != nil {
		return nil, fmt.Errorf("connecting to the container runtime at %s: %w", socket, err)
	}
	return &CRI{conn: conn, images: runtimeapi.NewImageServiceClient(conn), rt: runtimeapi.NewRuntimeServiceClient(conn)}, nil
}

// Close ends the connection.
func (c *CRI) Close() error { return c.conn.Close() }

// Version is the runtime's name and version ("containerd" "v2.4.2", "cri-o" "1.33.2").
func (c *CRI) Version(ctx context.Context) (name, version string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := c.rt.Version(ctx, &runtimeapi.VersionRequest{})
	if err != nil {
		return "", "", fmt.Errorf("asking the container runtime its version: %w", err)
	}
	return v.RuntimeName, v.RuntimeVersion, nil
}

// Status says whether the runtime has ref, and whether it reports it pinned.
func (c *CRI) Status(ctx context.Context, ref string) (present, pinned bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st, err := c.images.ImageStatus(ctx, &runtimeapi.ImageStatusRequest{Image: &runtimeapi.ImageSpec{Image: ref}})
	if err != nil {
		return false, false, fmt.Errorf("asking the container runtime for %s: %w", ref, err)
	}
	if st.Image == nil {
		return false, false, nil
	}
	return true, st.Image.Pinned, nil
}

// Pull pulls ref with auth (nil: none, or what the runtime's configuration has).
func (c *CRI) Pull(ctx context.Context, ref string, auth *runtimeapi.AuthConfig) error {
	_, err := c.images.PullImage(ctx, &runtimeapi.PullImageRequest{Image: &runtimeapi.ImageSpec{Image: ref}, Auth: auth})
	return err
}
