package userdata

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/protocol"
)

// InstallerReconciler rotates the CA in installer-made user-data Secrets (no managed label).
type InstallerReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

// SetupWithManager watches unmanaged Secrets of the Machine API namespace, and the CA source,
// which re-checks all of them.
func (r *InstallerReconciler) SetupWithManager(mgr ctrl.Manager) error {
	unmanaged := predicate.NewPredicateFuncs(func(obj client.Object) bool {
		return obj.GetNamespace() == r.Options.MachineAPINamespace && !protocol.IsManagedUserData(obj.GetLabels())
	})
	return ctrl.NewControllerManagedBy(mgr).
		Named("userdata-installer").
		For(&corev1.Secret{}, builder.WithPredicates(unmanaged)).
		Watches(r.Options.CA.Object(), handler.EnqueueRequestsFromMapFunc(r.allInstallerSecretsIfCA)).
		Complete(r)
}

func (r *InstallerReconciler) allInstallerSecretsIfCA(ctx context.Context, obj client.Object) []reconcile.Request {
	if !r.Options.CA.Matches(obj) {
		return nil
	}
	var secrets corev1.SecretList
	if err := r.Client.List(ctx, &secrets, client.InNamespace(r.Options.MachineAPINamespace)); err != nil {
		return nil
	}
	var reqs []reconcile.Request
	for _, s := range secrets.Items {
		if !protocol.IsManagedUserData(s.Labels) {
			reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&s)})
		}
	}
	return reqs
}

// Reconcile replaces the single pinned CA of one installer Secret when the server CA changed.
func (r *InstallerReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var sec corev1.Secret
	if err := r.Client.Get(ctx, req.NamespacedName, &sec); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	userData, ok := sec.Data[protocol.UserDataKey]
	if !ok || protocol.IsManagedUserData(sec.Labels) {
		return reconcile.Result{}, nil
	}
	bundle, err := r.Options.CA.Read(ctx, r.Client)
	if err != nil || len(bundle) == 0 {
		return reconcile.Result{}, err
	}
	out, changed, err := RotateInstallerCA(userData, bundle)
	switch {
	case errors.Is(err, ErrNotPointerConfig):
		return reconcile.Result{}, nil
	case errors.Is(err, ErrSeveralCAs):
		r.Recorder.Eventf(&sec, corev1.EventTypeWarning, ReasonCANotRotated, "%s/%s: %v; update its CA by hand", sec.Namespace, sec.Name, err)
		return reconcile.Result{}, nil
	case err != nil:
		r.Recorder.Eventf(&sec, corev1.EventTypeWarning, ReasonCANotRotated, "%s/%s: %v", sec.Namespace, sec.Name, err)
		return reconcile.Result{}, nil
	case !changed:
		return reconcile.Result{}, nil
	}
	sec.Data[protocol.UserDataKey] = out
	if err := r.Client.Update(ctx, &sec); err != nil {
		return reconcile.Result{}, fmt.Errorf("rotating CA in %s: %w", req.NamespacedName, err)
	}
	r.Recorder.Eventf(&sec, corev1.EventTypeNormal, ReasonCARotated, "Replaced the Machine Config Server CA in %s/%s", sec.Namespace, sec.Name)
	return reconcile.Result{}, nil
}
