package bootimage

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/bootimage"
)

func (r *Reconciler) historyKey() client.ObjectKey {
	return client.ObjectKey{Namespace: r.Options.BootImagesNamespace, Name: PatchHistoryConfigMap}
}

func (r *Reconciler) loadHistory(ctx context.Context) (bootimage.PatchHistory, error) {
	cm := &corev1.ConfigMap{}
	if err := r.Client.Get(ctx, r.historyKey(), cm); err != nil {
		if apierrors.IsNotFound(err) {
			return bootimage.PatchHistory{}, nil
		}
		return nil, fmt.Errorf("reading boot image patch history: %w", err)
	}
	return bootimage.DecodePatchHistory(cm.Data), nil
}

// saveHistory writes the history when it changed; an empty history needs no ConfigMap.
func (r *Reconciler) saveHistory(ctx context.Context, h bootimage.PatchHistory) error {
	data := bootimage.EncodePatchHistory(h)
	cm := &corev1.ConfigMap{}
	err := r.Client.Get(ctx, r.historyKey(), cm)
	switch {
	case apierrors.IsNotFound(err):
		if len(data) == 0 {
			return nil
		}
		cm = &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: r.Options.BootImagesNamespace, Name: PatchHistoryConfigMap}, Data: data}
		return wrapHistory(r.Client.Create(ctx, cm))
	case err != nil:
		return wrapHistory(err)
	case maps.Equal(cm.Data, data):
		return nil
	}
	cm.Data = data
	return wrapHistory(r.Client.Update(ctx, cm))
}

func wrapHistory(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("writing boot image patch history: %w", err)
}
