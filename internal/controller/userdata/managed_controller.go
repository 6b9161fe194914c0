package userdata

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/controller/enqueue"
	"github.com/mco-dev/mco/internal/protocol"
)

// Event reasons.
const (
	ReasonPointerWritten   = "UserDataUpdated"
	ReasonPointerBlocked   = "UserDataNotWritten"
	ReasonCANotRotated     = "UserDataCANotRotated"
	ReasonCARotated        = "UserDataCARotated"
	disableTemplatingValue = "true\n"
)

// ManagedReconciler keeps <pool>-user-data-managed Secrets equal to what PointerConfig makes.
type ManagedReconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
}

// SetupWithManager watches pools, the Secrets it owns (so hand edits and deletions are undone),
// the CA source (every pool) and the token Secrets (their pool).
func (r *ManagedReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		Named("userdata").
		// Only a pool's name and UID go into its Secret: status churn during a rollout must not
		// rebuild and re-validate every pointer config.
		For(&mcfgv1.MachineConfigPool{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.poolOfSecret)).
		Watches(r.Options.CA.Object(), handler.EnqueueRequestsFromMapFunc(r.allPoolsIfCA)).
		Complete(r)
}

func (r *ManagedReconciler) poolOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	ns, name := obj.GetNamespace(), obj.GetName()
	if pool, ok := protocol.PoolOfManagedUserDataSecret(name); ok && ns == r.Options.MachineAPINamespace {
		return poolRequest(pool)
	}
	if pool, ok := protocol.PoolOfServerTokenSecret(name); ok && ns == r.Options.ServerNamespace {
		return poolRequest(pool)
	}
	// A CA kept in a Secret is handled by the CA watch.
	return nil
}

func (r *ManagedReconciler) allPoolsIfCA(ctx context.Context, obj client.Object) []reconcile.Request {
	if !r.Options.CA.Matches(obj) {
		return nil
	}
	return enqueue.All(r.Client, &mcfgv1.MachineConfigPoolList{}, "pools for a CA change")(ctx, obj)
}

func poolRequest(pool string) []reconcile.Request {
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: pool}}}
}

// Reconcile writes the pool's pointer Secret when it differs from the desired one.
func (r *ManagedReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := client.ObjectKey{Namespace: r.Options.MachineAPINamespace, Name: protocol.ManagedUserDataSecretName(req.Name)}
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return reconcile.Result{}, err
		}
		// The ownerReference lets a cluster's garbage collector do this too; doing it here does
		// not depend on one running.
		return reconcile.Result{}, r.deleteManaged(ctx, key)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.deleteManaged(ctx, key)
	}
	desired, err := r.desiredSecret(ctx, pool, key)
	var blocked blockedError
	switch {
	case errors.As(err, &blocked):
		// Waiting for an input: its watch calls again once it changes.
		r.Recorder.Event(pool, corev1.EventTypeWarning, ReasonPointerBlocked, err.Error())
		return reconcile.Result{}, nil
	case err != nil:
		return reconcile.Result{}, err
	}
	existing := &corev1.Secret{}
	switch err := r.Client.Get(ctx, key, existing); {
	case client.IgnoreNotFound(err) != nil:
		return reconcile.Result{}, err
	case err != nil:
		if err := r.Client.Create(ctx, desired); err != nil {
			return reconcile.Result{}, fmt.Errorf("creating %s: %w", key, err)
		}
		r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonPointerWritten, "Created %s", key)
		return reconcile.Result{}, nil
	}
	if secretUpToDate(existing, desired) {
		return reconcile.Result{}, nil
	}
	updated := existing.DeepCopy()
	updated.Data, updated.Type = desired.Data, desired.Type
	if updated.Labels == nil {
		updated.Labels = map[string]string{}
	}
	maps.Copy(updated.Labels, desired.Labels)
	updated.OwnerReferences = desired.OwnerReferences
	if err := r.Client.Update(ctx, updated); err != nil {
		return reconcile.Result{}, fmt.Errorf("updating %s: %w", key, err)
	}
	r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonPointerWritten, "Updated %s", key)
	return reconcile.Result{}, nil
}

func (r *ManagedReconciler) desiredSecret(ctx context.Context, pool *mcfgv1.MachineConfigPool, key client.ObjectKey) (*corev1.Secret, error) {
	bundle, err := r.Options.CA.Read(ctx, r.Client)
	if err != nil {
		return nil, err
	}
	if len(bundle) == 0 {
		return nil, blockedf("no CA bundle at %s %s/%s key %s yet; %s not written", r.Options.CA.Kind, r.Options.CA.Namespace, r.Options.CA.Name, r.Options.CA.Key, key)
	}
	token, err := r.poolToken(ctx, pool.Name, key)
	if err != nil {
		return nil, err
	}
	userData, err := PointerConfig(Pointer{
		Pool: pool.Name, ServerHost: r.Options.ServerHost, CABundle: bundle,
		Token: token, SpecVersion: r.Options.SpecVersion,
	})
	if err != nil {
		return nil, blockedError{err}
	}
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: key.Namespace, Name: key.Name,
			Labels: map[string]string{protocol.ManagedUserDataLabel: ""},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool", Name: pool.Name, UID: pool.UID,
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{protocol.UserDataKey: userData, protocol.DisableTemplatingKey: []byte(disableTemplatingValue)},
	}, nil
}

// poolToken is the pool's current bearer token. The server refuses pools without one, so a
// pointer config without it would boot machines that can never fetch their config: until the
// token controller (or the admin) provides the Secret, nothing is written.
func (r *ManagedReconciler) poolToken(ctx context.Context, pool string, key client.ObjectKey) (string, error) {
	ref := client.ObjectKey{Namespace: r.Options.ServerNamespace, Name: protocol.ServerTokenSecretName(pool)}
	var secret corev1.Secret
	err := r.Client.Get(ctx, ref, &secret)
	if client.IgnoreNotFound(err) != nil {
		return "", err
	}
	token := string(bytes.TrimSpace(secret.Data[protocol.ServerTokenKey]))
	switch {
	case err != nil:
		return "", blockedf("waiting for Secret %s with the pool's Machine Config Server token; %s not written", ref, key)
	case token == "":
		return "", blockedf("Secret %s has no %q; %s not written", ref, protocol.ServerTokenKey, key)
	}
	return token, nil
}

// blockedError is a missing or unusable input the pool's pointer config waits for (reported
// as ReasonPointerBlocked), as opposed to a failed API call (retried).
type blockedError struct{ error }

func blockedf(format string, args ...any) error { return blockedError{fmt.Errorf(format, args...)} }

func secretUpToDate(existing, desired *corev1.Secret) bool {
	for k, v := range desired.Labels {
		if got, ok := existing.Labels[k]; !ok || got != v {
			return false
		}
	}
	return existing.Type == desired.Type &&
		equality.Semantic.DeepEqual(existing.Data, desired.Data) &&
		equality.Semantic.DeepEqual(existing.OwnerReferences, desired.OwnerReferences)
}

func (r *ManagedReconciler) deleteManaged(ctx context.Context, key client.ObjectKey) error {
	var sec corev1.Secret
	if err := r.Client.Get(ctx, key, &sec); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !protocol.IsManagedUserData(sec.Labels) {
		return nil
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, &sec))
}
