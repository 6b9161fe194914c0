// Package kubeletstandin is a stand-in for the kubelet on the dev cluster's machines. It is
// not a kubelet: it runs no pods. It does the two things of a kubelet's life that mco depends
// on: it registers the machine's Node (with the labels the platform gives it) when the machine
// boots, reports it Ready while it runs, and reports it NotReady when the machine shuts down,
// as the kubelet's graceful node shutdown does. A reboot thus shows as NotReady for real, ending
// when the machine is back.
package kubeletstandin

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
)

// Options for Run.
type Options struct {
	NodeName string
	Labels   map[string]string
	Log      *slog.Logger
}

// Run registers the Node, reports it Ready, and reports it NotReady when ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	if opts.Log == nil {
		opts.Log = slog.Default()
	}
	cs, err := typedcorev1.NewForConfig(cfg)
	if err != nil {
		return err
	}
	nodes := cs.Nodes()
	if err := retry(ctx, opts.Log, "registering node", func() error { return register(ctx, nodes, opts) }); err != nil {
		return err
	}
	ready := func(ctx context.Context, status corev1.ConditionStatus, reason, msg string) error {
		return setReady(ctx, nodes, opts.NodeName, status, reason, msg)
	}
	if err := retry(ctx, opts.Log, "posting Ready", func() error {
		return ready(ctx, corev1.ConditionTrue, "KubeletReady", "kubelet stand-in is posting ready status")
	}); err != nil {
		return err
	}
	opts.Log.Info("node registered and Ready", "node", opts.NodeName)
	// Ready is posted once per boot: nothing in a dev cluster times Nodes out by heartbeat.
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := ready(stopCtx, corev1.ConditionFalse, "KubeletNotReady", "node is shutting down"); err != nil {
		return fmt.Errorf("reporting shutdown: %w", err)
	}
	opts.Log.Info("node reported NotReady: shutting down", "node", opts.NodeName)
	return nil
}

// register creates the Node, or adds the platform's labels to the one a previous boot created.
func register(ctx context.Context, nodes typedcorev1.NodeInterface, opts Options) error {
	node, err := nodes.Get(ctx, opts.NodeName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		node = &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: opts.NodeName, Labels: opts.Labels}}
		_, err = nodes.Create(ctx, node, metav1.CreateOptions{})
		return err
	}
	if err != nil {
		return err
	}
	missing := false
	for k, v := range opts.Labels {
		if got, ok := node.Labels[k]; !ok || got != v {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	if node.Labels == nil {
		node.Labels = map[string]string{}
	}
	for k, v := range opts.Labels {
		node.Labels[k] = v
	}
	_, err = nodes.Update(ctx, node, metav1.UpdateOptions{})
	return err
}

func setReady(ctx context.Context, nodes typedcorev1.NodeInterface, name string, status corev1.ConditionStatus, reason, msg string) error {
	node, err := nodes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return err
	}
	now := metav1.Now()
	cond := corev1.NodeCondition{Type: corev1.NodeReady, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	found := false
	for i, c := range node.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		found = true
		if c.Status == status {
			cond.LastTransitionTime = c.LastTransitionTime
		}
		node.Status.Conditions[i] = cond
	}
	if !found {
		node.Status.Conditions = append(node.Status.Conditions, cond)
	}
	node.Status.Addresses = []corev1.NodeAddress{{Type: corev1.NodeHostName, Address: name}}
	_, err = nodes.UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return err
}

// retry keeps trying while the API server is unreachable (a machine may boot before it is up).
func retry(ctx context.Context, log *slog.Logger, what string, f func() error) error {
	delay := 500 * time.Millisecond
	for {
		err := f()
		if err == nil {
			return nil
		}
		log.Error(what+" failed; retrying", "in", delay, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 10*time.Second)
	}
}
