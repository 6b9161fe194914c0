package e2e

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/test/clustertest"
)

// kubeadmPinRefused: the kubeadm layout's nodes run the distribution's containerd (Debian 12's
// 1.6), which cannot pin images: a PinnedImageSet is refused on each worker before any pull,
// naming the runtime and its version, and the pool says so. (The image's registry does not exist:
// the refusal comes before any pull or manifest read.)
func kubeadmPinRefused(t *testing.T, ctx context.Context, cl *clustertest.Cluster, workers []string) {
	t.Run("a PinnedImageSet is refused on containerd 1.6, naming it", func(t *testing.T) {
		s := &mcfgv1.PinnedImageSet{ObjectMeta: metav1.ObjectMeta{Name: "e2e-refused", Labels: map[string]string{protocol.RoleLabel: protocol.WorkerPool}},
			Spec: mcfgv1.PinnedImageSetSpec{PinnedImages: []mcfgv1.PinnedImageRef{{Name: mcfgv1.ImageDigestFormat("registry.invalid/mco/never@sha256:" + strings.Repeat("1", 64))}}}}
		if err := cl.C.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		defer func() { _ = cl.C.Delete(context.Background(), s) }()
		// Debian's package reports its own version string ("1.6.20~ds1").
		why := regexp.MustCompile(`the node's container runtime is containerd 1\.6\.[^ ]+, which cannot pin images`)
		clustertest.Eventually(t, 2*time.Minute, "every worker refusing the set, naming its containerd", func() bool {
			for _, n := range workers {
				m := &mcfgv1.MachineConfigNode{}
				if err := cl.C.Get(ctx, client.ObjectKey{Name: n}, m); err != nil {
					return false
				}
				ok := false
				for _, e := range m.Status.PinnedImageSets {
					ok = ok || e.Name == s.Name && e.LastFailedGeneration == 1 && why.MatchString(e.LastFailedGenerationError)
				}
				if !ok {
					return false
				}
			}
			return true
		})
		// The pool's condition follows the nodes' reports through the controller: waited for too.
		clustertest.Eventually(t, time.Minute, "the pool naming containerd 1.6", func() bool {
			p := &mcfgv1.MachineConfigPool{}
			if err := cl.C.Get(ctx, client.ObjectKey{Name: protocol.WorkerPool}, p); err != nil {
				return false
			}
			c := poolcondition.Get(&p.Status, mcfgv1.MachineConfigPoolPinnedImageSetsDegraded)
			return c != nil && c.Status == "True" && why.MatchString(c.Message)
		})
	})
}
