package bootimage

import (
	"context"
	"fmt"

	"github.com/coreos/stream-metadata-go/stream"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/bootimage"
)

// loadStream reads and parses the golden boot images. Every failure is reported as the
// Degraded reason: nothing can be reconciled without them.
func (r *Reconciler) loadStream(ctx context.Context) (*stream.Stream, error) {
	key := client.ObjectKey{Namespace: r.Options.BootImagesNamespace, Name: bootimage.BootImagesConfigMap}
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, key, cm); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("ConfigMap %s not found", key)
		}
		return nil, fmt.Errorf("reading ConfigMap %s: %w", key, err)
	}
	st, err := bootimage.ParseStream(cm.Data[bootimage.StreamKey])
	if err != nil {
		return nil, fmt.Errorf("ConfigMap %s key %s: %w", key, bootimage.StreamKey, err)
	}
	return st, nil
}
