package servertoken

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/servertoken"
)

// Event reasons, on the pool.
const (
	ReasonTokenIssued  = "ServerTokenIssued"
	ReasonTokenUpdated = "ServerTokenUpdated"
	// ReasonTokenNotManaged: the pool's token Secret lacks the managed label, so it is the
	// admin's; recorded once per Secret and process.
	ReasonTokenNotManaged = "ServerTokenNotManaged"
)

// Options configure the token controller.
type Options struct {
	// Namespace is the server's (mco controller --server-namespace), where the token Secrets live.
	Namespace string
	Policy    servertoken.Policy
}

// Reconciler keeps each pool's managed token Secret as servertoken.Plan decides.
type Reconciler struct {
	Client   client.Client
	Recorder record.EventRecorder
	Options  Options
	// Now is the clock; nil means time.Now. Tests inject one to rotate without waiting.
	Now func() time.Time
	// NewToken issues tokens; nil means servertoken.NewToken.
	NewToken func() string

	// noticed holds the UIDs of admin-owned token Secrets already reported.
	noticed sync.Map
}

// SetupWithManager watches pools (creation and deletion) and the token Secrets (hand edits and
// deletions are repaired at once).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if err := r.Options.Policy.Validate(); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("servertoken").
		// Only the pool's existence, name and UID matter: status churn during a rollout must
		// not wake this controller. Deletion bumps the generation, so it still gets through.
		For(&mcfgv1.MachineConfigPool{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&corev1.Secret{}, handler.EnqueueRequestsFromMapFunc(r.poolOfSecret)).
		Complete(r)
}

func (r *Reconciler) poolOfSecret(_ context.Context, obj client.Object) []reconcile.Request {
	pool, ok := protocol.PoolOfServerTokenSecret(obj.GetName())
	if !ok || obj.GetNamespace() != r.Options.Namespace {
		return nil
	}
	return []reconcile.Request{{NamespacedName: types.NamespacedName{Name: pool}}}
}

// Reconcile creates, updates or deletes one pool's token Secret and asks to be called again
// when its next rotation or expiry is due.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	key := client.ObjectKey{Namespace: r.Options.Namespace, Name: protocol.ServerTokenSecretName(req.Name)}
	pool := &mcfgv1.MachineConfigPool{}
	if err := r.Client.Get(ctx, req.NamespacedName, pool); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		// The ownerReference lets a cluster's garbage collector do this too; doing it here
		// does not depend on one running.
		return reconcile.Result{}, r.deleteManaged(ctx, key, nil)
	}
	if !pool.DeletionTimestamp.IsZero() {
		return reconcile.Result{}, r.deleteManaged(ctx, key, pool)
	}
	existing := &corev1.Secret{}
	switch err := r.Client.Get(ctx, key, existing); {
	case apierrors.IsNotFound(err):
		return r.create(ctx, pool, key)
	case err != nil:
		return reconcile.Result{}, err
	}
	if !protocol.IsManagedServerToken(existing.Labels) {
		r.noteAdminSecret(ctx, pool, existing)
		return reconcile.Result{}, nil
	}
	return r.update(ctx, pool, existing)
}

func (r *Reconciler) create(ctx context.Context, pool *mcfgv1.MachineConfigPool, key client.ObjectKey) (reconcile.Result, error) {
	plan := servertoken.Plan(servertoken.State{}, r.now(), r.Options.Policy, r.newToken)
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name},
		Type:       corev1.SecretTypeOpaque,
	}
	apply(secret, pool, plan.Desired)
	if err := r.Client.Create(ctx, secret); err != nil {
		return reconcile.Result{}, fmt.Errorf("creating %s: %w", key, err)
	}
	r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonTokenIssued, "Created %s with a new Machine Config Server token", key)
	return reconcile.Result{RequeueAfter: recheck(plan.RequeueAfter)}, nil
}

func (r *Reconciler) update(ctx context.Context, pool *mcfgv1.MachineConfigPool, existing *corev1.Secret) (reconcile.Result, error) {
	current := servertoken.FromSecret(existing.Data, existing.Annotations)
	plan := servertoken.Plan(current, r.now(), r.Options.Policy, r.newToken)
	desired := existing.DeepCopy()
	apply(desired, pool, plan.Desired)
	if equality.Semantic.DeepEqual(existing, desired) {
		return reconcile.Result{RequeueAfter: recheck(plan.RequeueAfter)}, nil
	}
	if err := r.Client.Update(ctx, desired); err != nil {
		return reconcile.Result{}, fmt.Errorf("updating %s: %w", client.ObjectKeyFromObject(existing), err)
	}
	what := "repaired its label, owner or data"
	if len(plan.Changes) > 0 {
		what = strings.Join(plan.Changes, "; ")
	}
	r.Recorder.Eventf(pool, corev1.EventTypeNormal, ReasonTokenUpdated, "%s/%s: %s", existing.Namespace, existing.Name, what)
	return reconcile.Result{RequeueAfter: recheck(plan.RequeueAfter)}, nil
}

// maxRecheck bounds the wait for the next rotation or expiry: timers do not count time a machine
// spends suspended, and a month-long timer would let a token outlive its lifetime by that much.
const maxRecheck = time.Hour

func recheck(due time.Duration) time.Duration {
	if due <= 0 || due > maxRecheck {
		return maxRecheck
	}
	return due
}

// apply writes state, the managed label and the pool's ownerReference into secret.
func apply(secret *corev1.Secret, pool *mcfgv1.MachineConfigPool, state servertoken.State) {
	if secret.Labels == nil {
		secret.Labels = map[string]string{}
	}
	secret.Labels[protocol.ManagedServerTokenLabel] = ""
	if secret.Annotations == nil {
		secret.Annotations = map[string]string{}
	}
	secret.Annotations[protocol.ServerTokenIssuedAtAnnotation] = state.IssuedAtAnnotation()
	secret.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: mcfgv1.GroupVersion.String(), Kind: "MachineConfigPool", Name: pool.Name, UID: pool.UID,
		BlockOwnerDeletion: ptr.To(true),
	}}
	secret.Data = state.Data()
}

// deleteManaged deletes the token Secret of a deleted pool, unless it is the admin's.
func (r *Reconciler) deleteManaged(ctx context.Context, key client.ObjectKey, pool *mcfgv1.MachineConfigPool) error {
	var secret corev1.Secret
	if err := r.Client.Get(ctx, key, &secret); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !protocol.IsManagedServerToken(secret.Labels) {
		if pool != nil {
			r.noteAdminSecret(ctx, pool, &secret)
		}
		return nil
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, &secret, client.Preconditions{UID: &secret.UID}))
}

// noteAdminSecret says once per Secret, on its pool, that it is left alone: an admin who
// wanted mco to manage it can delete it (mco then creates its own) or add the label.
func (r *Reconciler) noteAdminSecret(ctx context.Context, pool *mcfgv1.MachineConfigPool, secret *corev1.Secret) {
	if _, seen := r.noticed.LoadOrStore(secret.UID, true); seen {
		return
	}
	msg := fmt.Sprintf("%s/%s has no label %s: it is the admin's, so mco neither rotates nor deletes it (delete it to have mco issue and rotate one)",
		secret.Namespace, secret.Name, protocol.ManagedServerTokenLabel)
	ctrl.LoggerFrom(ctx).Info(msg)
	r.Recorder.Event(pool, corev1.EventTypeNormal, ReasonTokenNotManaged, msg)
}

func (r *Reconciler) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

func (r *Reconciler) newToken() string {
	if r.NewToken != nil {
		return r.NewToken()
	}
	return servertoken.NewToken()
}
