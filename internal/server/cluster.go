package server

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
)

// Well-known objects in the server's namespace (OpenShift's names).
const (
	// DefaultBootstrapTokenSecret holds the kubelet bootstrap token ("token") and, as a fallback
	// for the cluster CA, "ca.crt".
	DefaultBootstrapTokenSecret = "node-bootstrapper-token"
	// KubeconfigDataConfigMap holds the cluster CA bundle ("ca-bundle.crt") for served kubeconfigs.
	KubeconfigDataConfigMap = "kubeconfig-data"
	// ControllerConfigName is the ControllerConfig whose kubeAPIServerServingCAData becomes the kubelet CA.
	ControllerConfigName = "machine-config-controller"
)

// ClusterOptions configure cluster mode.
type ClusterOptions struct {
	// Namespace holds token Secrets (a pool without one is refused unless the server allows
	// unauthenticated requests), the bootstrap token Secret and the kubeconfig-data ConfigMap.
	Namespace string
	// APIServerURL is written into served kubeconfigs; new machines must be able to reach it.
	APIServerURL string
	// BootstrapTokenSecret names the Secret with the kubelet bootstrap token.
	BootstrapTokenSecret string
	// PullSecret is the Secret whose .dockerconfigjson is served as /var/lib/kubelet/config.json
	// (OpenShift: openshift-config/pull-secret); zero serves none. Only this one Secret of its
	// namespace is cached (a metadata.name field selector), so RBAC can name it.
	PullSecret types.NamespacedName
}

// ServedConfigName is the rendered config new machines of pool get (mco-behaviour §5.4): the
// pool's target once at least one node runs it, so a target proven on one node reaches new
// machines, but a fresh target that may be broken does not; otherwise what the pool's nodes
// run. A pool without status yet serves its target, as it has nothing else.
func ServedConfigName(pool *mcfgv1.MachineConfigPool) string {
	if pool.Status.UpdatedMachineCount > 0 || pool.Status.Configuration.Name == "" {
		return pool.Spec.Configuration.Name
	}
	return pool.Status.Configuration.Name
}

// RunCluster serves the cluster's pools until ctx ends. Everything is read through informers:
// requests never reach the API server, and any change to a pool, MachineConfig, token Secret,
// pull secret, CA or ControllerConfig recomputes the served set (cached bytes survive for
// unchanged pools).
func RunCluster(ctx context.Context, cfg *rest.Config, store *Store, opts ClusterOptions, log *slog.Logger) error {
	if opts.BootstrapTokenSecret == "" {
		opts.BootstrapTokenSecret = DefaultBootstrapTokenSecret
	}
	if opts.APIServerURL == "" {
		opts.APIServerURL = cfg.Host
	}
	inNamespace := cache.ByObject{Namespaces: map[string]cache.Config{opts.Namespace: {}}}
	secrets := cache.ByObject{Namespaces: map[string]cache.Config{opts.Namespace: {}}}
	if ps := opts.PullSecret; ps.Name != "" && ps.Namespace != opts.Namespace {
		// One more namespace for Secrets, and in it only the pull secret: the server must not
		// hold, or be allowed to read, the rest of that namespace's Secrets (openshift-config
		// also holds identity-provider and etcd credentials). Without that RBAC the cache never
		// syncs and nothing is served, as for any informer the server lacks rights for.
		secrets.Namespaces[ps.Namespace] = cache.Config{FieldSelector: fields.OneTermEqualSelector("metadata.name", ps.Name)}
	}
	c, err := cache.New(cfg, cache.Options{
		Scheme: scheme.Scheme,
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}:    secrets,
			&corev1.ConfigMap{}: inNamespace,
		},
	})
	if err != nil {
		return err
	}
	changed := make(chan struct{}, 1)
	notify := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	handler := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	src := &clusterSource{reader: c, opts: opts, log: log}
	for _, obj := range []client.Object{&mcfgv1.MachineConfigPool{}, &mcfgv1.MachineConfig{}, &corev1.Secret{}, &corev1.ConfigMap{}, &mcfgv1.ControllerConfig{}} {
		inf, err := c.GetInformer(ctx, obj)
		if err != nil {
			if _, optional := obj.(*mcfgv1.ControllerConfig); optional {
				log.Warn("not watching ControllerConfig; served configs carry no kubelet CA", "err", err)
				continue
			}
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(handler); err != nil {
			return err
		}
		if _, ok := obj.(*mcfgv1.ControllerConfig); ok {
			src.haveControllerConfig = true
		}
	}
	cacheErr := make(chan error, 1)
	go func() { cacheErr <- c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("informer caches did not sync")
	}
	for {
		pools, err := src.snapshot(ctx)
		if err != nil {
			log.Error("reading pools failed; still serving the previous configs", "err", err)
		} else {
			store.Replace(pools)
		}
		select {
		case <-ctx.Done():
			return nil
		case err := <-cacheErr:
			return err
		case <-changed:
			// Let a burst of events (a new rendered MC, then the pool pointing at it) settle.
			time.Sleep(100 * time.Millisecond)
		}
	}
}

type clusterSource struct {
	reader               client.Reader
	opts                 ClusterOptions
	log                  *slog.Logger
	haveControllerConfig bool
	// pullSecretNote is what was last logged about the pull secret, so each change of its
	// state (absent, unusable, served) is logged once, not on every snapshot.
	pullSecretNote string
}

// snapshot computes every pool's state from the informer caches.
func (s *clusterSource) snapshot(ctx context.Context) (map[string]PoolState, error) {
	kubeletCA, err := s.kubeletCA(ctx)
	if err != nil {
		return nil, err
	}
	kubeconfig, clusterCA, err := s.kubeconfig(ctx)
	if err != nil {
		return nil, err
	}
	if kubeletCA == nil {
		// No ControllerConfig (any Kubernetes but OpenShift): the kubelet authenticates the API
		// server's client certificate with the cluster's CA, as kubeadm's kubelets do.
		kubeletCA = clusterCA
	}
	pullSecret, err := s.pullSecret(ctx)
	if err != nil {
		return nil, err
	}
	extras := Extras{KubeletCA: kubeletCA, Kubeconfig: kubeconfig, PullSecret: pullSecret}
	extrasKey := extras.key()
	var pools mcfgv1.MachineConfigPoolList
	if err := s.reader.List(ctx, &pools); err != nil {
		return nil, err
	}
	states := make(map[string]PoolState, len(pools.Items))
	for i := range pools.Items {
		pool := &pools.Items[i]
		state := s.poolState(ctx, pool)
		state.addExtras(extras, extrasKey)
		tokens, err := s.tokens(ctx, pool.Name)
		if err != nil {
			// Failing closed: a pool whose token Secret is unreadable must not be served openly.
			s.log.Error("unreadable token Secret; refusing all requests for the pool", "pool", pool.Name, "err", err)
			tokens = &PoolTokens{}
		}
		state.Tokens = tokens
		state.EtcdIndex = EtcdIndexOf(pool)
		states[pool.Name] = state
	}
	return states, nil
}

func (s *clusterSource) poolState(ctx context.Context, pool *mcfgv1.MachineConfigPool) PoolState {
	name := ServedConfigName(pool)
	if name == "" {
		return PoolState{Err: fmt.Errorf("pool %s has no rendered config yet", pool.Name)}
	}
	var mc mcfgv1.MachineConfig
	if err := s.reader.Get(ctx, client.ObjectKey{Name: name}, &mc); err != nil {
		return PoolState{Err: fmt.Errorf("rendered config %s of pool %s: %w", name, pool.Name, err)}
	}
	return PoolState{Served: ServedInput{Config: &mc}, Key: mc.Name + "/" + mc.ResourceVersion}
}

func (s *clusterSource) tokens(ctx context.Context, pool string) (*PoolTokens, error) {
	var secret corev1.Secret
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: protocol.ServerTokenSecretName(pool)}, &secret)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	t, ok, err := TokensFromSecretData(secret.Data)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("Secret %s has no %q", secret.Name, protocol.ServerTokenKey)
	}
	return &t, nil
}

func (s *clusterSource) kubeletCA(ctx context.Context) ([]byte, error) {
	if !s.haveControllerConfig {
		return nil, nil
	}
	var cc mcfgv1.ControllerConfig
	err := s.reader.Get(ctx, client.ObjectKey{Name: ControllerConfigName}, &cc)
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return cc.Spec.KubeAPIServerServingCAData, err
}

// kubeconfig builds the served kubeconfig, and returns the cluster CA it trusts, or nil (logged)
// when the bootstrap token Secret does not exist yet: machines then boot without a join
// credential rather than not at all.
func (s *clusterSource) kubeconfig(ctx context.Context) ([]byte, []byte, error) {
	var secret corev1.Secret
	err := s.reader.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: s.opts.BootstrapTokenSecret}, &secret)
	if apierrors.IsNotFound(err) {
		s.log.Warn("no bootstrap token Secret; served configs carry no kubeconfig", "namespace", s.opts.Namespace, "secret", s.opts.BootstrapTokenSecret)
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	ca := secret.Data[corev1.ServiceAccountRootCAKey]
	var cm corev1.ConfigMap
	err = s.reader.Get(ctx, client.ObjectKey{Namespace: s.opts.Namespace, Name: KubeconfigDataConfigMap}, &cm)
	switch {
	case err == nil && cm.Data["ca-bundle.crt"] != "":
		ca = []byte(cm.Data["ca-bundle.crt"])
	case err != nil && !apierrors.IsNotFound(err):
		return nil, nil, err
	}
	kubeconfig, err := BuildKubeconfig(s.opts.APIServerURL, ca, string(secret.Data[corev1.ServiceAccountTokenKey]))
	return kubeconfig, ca, err
}

// pullSecret is the configured Secret's .dockerconfigjson, or nil when there is none to serve:
// no Secret (machines then boot without registry credentials rather than not at all, as with
// the kubeconfig), no such key, or not a JSON object.
func (s *clusterSource) pullSecret(ctx context.Context) ([]byte, error) {
	ref := s.opts.PullSecret
	if ref.Name == "" {
		return nil, nil
	}
	var secret corev1.Secret
	err := s.reader.Get(ctx, ref, &secret)
	if apierrors.IsNotFound(err) {
		s.notePullSecret(slog.LevelInfo, "no pull secret; served configs carry no "+PullSecretPath)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pull secret %s: %w", ref, err)
	}
	data := secret.Data[PullSecretKey]
	if len(data) == 0 {
		s.notePullSecret(slog.LevelWarn, "pull secret has no "+PullSecretKey+"; served configs carry no "+PullSecretPath)
		return nil, nil
	}
	if checkPullSecret(data) != nil {
		// The parse error is not logged: it quotes the secret's bytes.
		s.notePullSecret(slog.LevelWarn, "pull secret's "+PullSecretKey+" is not a JSON object; served configs carry no "+PullSecretPath)
		return nil, nil
	}
	s.notePullSecret(slog.LevelInfo, "serving the pull secret as "+PullSecretPath)
	return data, nil
}

func (s *clusterSource) notePullSecret(level slog.Level, msg string) {
	if msg == s.pullSecretNote {
		return
	}
	s.pullSecretNote = msg
	s.log.Log(context.Background(), level, msg, "namespace", s.opts.PullSecret.Namespace, "secret", s.opts.PullSecret.Name)
}
