package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/serverguard"
)

// ServerGuard writes a node's rules keeping its pods off the Machine Config Server's ports
// (serverguard.Firewall on a node).
type ServerGuard interface {
	Apply(serverguard.Spec) (changed bool, err error)
	Remove(node string) error
	Table() string
}

// GuardOptions are the agent's part in keeping pods off the server.
type GuardOptions struct {
	// Firewall writes the rules; nil: the agent guards nothing (tests, --server-guard-ports "").
	Firewall ServerGuard
	// Ports are the server's ports to guard.
	Ports []uint16
	// PodNetworks are the networks the pods' addresses come from (the mco-install ConfigMap's
	// podNetworks); empty: the Node's spec.podCIDRs.
	PodNetworks []netip.Prefix
	// Namespace and DaemonSet are where the agent is installed: when it stops and either is
	// gone or going, mco is being uninstalled and the rules go with it.
	Namespace, DaemonSet string
	// Interval is how often the rules are checked and put back if someone removed them.
	Interval time.Duration
}

// ServerGuardFailed is the Warning event reason for pods not kept off the server.
const ServerGuardFailed = "ServerGuardFailed"

// guardServer keeps the node's rules in place until ctx ends: at once, then every Interval.
func (a *Agent) guardServer(ctx context.Context) {
	g := a.opts.Guard
	if g.Firewall == nil {
		return
	}
	interval := g.Interval
	if interval <= 0 {
		interval = 30 * time.Second
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	var failing string
	installed := false
	for {
		err := a.ensureGuard(installed)
		switch {
		case err != nil && err.Error() != failing:
			failing = err.Error()
			a.opts.Log.Error("pods are not kept off the Machine Config Server's ports", "node", a.opts.NodeName, "err", err)
			a.kube.event(corev1.EventTypeWarning, ServerGuardFailed, "Pods on this node are not kept off the Machine Config Server's ports: %v", err)
		case err == nil:
			failing, installed = "", true
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ensureGuard writes the rules the Node calls for, if they are not in place.
func (a *Agent) ensureGuard(installedBefore bool) error {
	g := a.opts.Guard
	n := a.kube.node()
	if n == nil {
		return errors.New("the Node is not known yet")
	}
	nets := g.PodNetworks
	if len(nets) == 0 {
		for _, c := range n.Spec.PodCIDRs {
			p, err := netip.ParsePrefix(c)
			if err != nil {
				return err
			}
			nets = append(nets, p)
		}
	}
	var addrs []netip.Addr
	for _, ad := range n.Status.Addresses {
		if ip, err := netip.ParseAddr(ad.Address); err == nil {
			addrs = append(addrs, ip)
		}
	}
	spec, err := serverguard.Plan(a.opts.NodeName, nets, addrs, g.Ports)
	if err != nil {
		return err
	}
	changed, err := g.Firewall.Apply(spec)
	if err != nil {
		return err
	}
	if changed {
		msg := "pods kept off the Machine Config Server's ports"
		if installedBefore {
			msg = "pods kept off the Machine Config Server's ports again: someone had removed or changed the rules"
		}
		a.opts.Log.Info(msg, "node", a.opts.NodeName, "nftables", "inet "+g.Firewall.Table(), "podNetworks", nets, "ports", g.Ports)
	}
	return nil
}

// cleanUpIfUninstalled undoes what the agent keeps on its node when it stops because mco is
// being removed: its DaemonSet or namespace gone or being deleted, or its credentials refused
// (the service account or its roles deleted). The node's server guard rules go, and the images
// it pinned are unpinned (else the kubelet could never collect them again). Anything else (a
// rolling update, the API unreachable) keeps both: pods stay off the server while no agent runs,
// and pinned images stay pinned.
func (a *Agent) cleanUpIfUninstalled() {
	g := a.opts.Guard
	if g.Namespace == "" || g.DaemonSet == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	why, err := a.kube.uninstalled(ctx, g.Namespace, g.DaemonSet)
	if err != nil {
		a.opts.Log.Warn("cannot tell whether mco is being removed; the rules keeping pods off the Machine Config Server and the pinned images stay", "node", a.opts.NodeName, "err", err)
		return
	}
	if why == "" {
		return
	}
	if g.Firewall != nil {
		if err := g.Firewall.Remove(a.opts.NodeName); err != nil {
			a.opts.Log.Error("mco is being removed, but the rules keeping pods off the Machine Config Server stay", "node", a.opts.NodeName, "why", why, "err", err)
		} else {
			a.opts.Log.Info("mco is being removed: rules keeping pods off the Machine Config Server removed", "node", a.opts.NodeName, "why", why)
		}
	}
	a.unpinIfPinned(ctx, why)
}

// uninstalled says why mco is being removed, or "" when it is not; an error when the API
// cannot tell.
func (c *cluster) uninstalled(ctx context.Context, namespace, daemonSet string) (string, error) {
	ds := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: "DaemonSet"}}
	ns := &metav1.PartialObjectMetadata{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}}
	for _, o := range []struct {
		what string
		key  client.ObjectKey
		obj  *metav1.PartialObjectMetadata
	}{
		{"namespace " + namespace, client.ObjectKey{Name: namespace}, ns},
		{"daemonset " + namespace + "/" + daemonSet, client.ObjectKey{Namespace: namespace, Name: daemonSet}, ds},
	} {
		err := c.client.Get(ctx, o.key, o.obj)
		switch {
		case apierrors.IsNotFound(err):
			return o.what + " is gone", nil
		case apierrors.IsUnauthorized(err) || apierrors.IsForbidden(err):
			return "the agent's credentials are refused (" + err.Error() + ")", nil
		case err != nil:
			return "", fmt.Errorf("reading %s: %w", o.what, err)
		case o.obj.DeletionTimestamp != nil:
			return o.what + " is being deleted", nil
		}
	}
	return "", nil
}
