package cluster

import (
	"context"
	"fmt"
	"time"

	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/config/crd"
	"github.com/mco-dev/mco/config/pools"
	devnet "github.com/mco-dev/mco/internal/dev/network"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/server"
)

// Namespaces and objects the dev cluster sets up, matching the defaults of mco's flags.
const (
	ServerNamespace     = "openshift-machine-config-operator"
	MachineAPINamespace = "openshift-machine-api"
)

// bootstrapServiceAccount is whose token the server hands new machines in their kubeconfig (as
// OpenShift's node-bootstrapper): it may only ask for a node client certificate, which
// kube-controller-manager approves and signs; the kubelet then acts as system:node:<name>.
const bootstrapServiceAccount = "node-bootstrapper"

func bootstrapObjects() []client.Object {
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: ServerNamespace, Name: bootstrapServiceAccount}
	bind := func(name, role string, subject rbacv1.Subject) client.Object {
		return &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{subject},
		}
	}
	return []client.Object{
		&corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: ServerNamespace, Name: bootstrapServiceAccount}},
		// kube-controller-manager's token controller fills it (token, ca.crt).
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ServerNamespace, Name: server.DefaultBootstrapTokenSecret,
				Annotations: map[string]string{corev1.ServiceAccountNameKey: bootstrapServiceAccount}},
			Type: corev1.SecretTypeServiceAccountToken,
		},
		bind("mco-dev-node-bootstrapper", "system:node-bootstrapper", sa),
		bind("mco-dev-node-client-approval", "system:certificates.k8s.io:certificatesigningrequests:nodeclient", sa),
		bind("mco-dev-node-client-renewal", "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
			rbacv1.Subject{APIGroup: rbacv1.GroupName, Kind: rbacv1.GroupKind, Name: "system:nodes"}),
	}
}

// install creates the CRDs, namespaces, built-in pools (plus custom ones inheriting worker),
// MachineConfiguration cluster. The pools' server tokens, the server's certificate and its CA
// bundle are not made here: mco controller creates them, as on a real install, and the user-data controller
// writes a pool's pointer config only once its token exists.
func install(ctx context.Context, c client.Client, customPools []string, network devnet.Layout) error {
	crds, err := crd.Installed()
	if err != nil {
		return err
	}
	for _, obj := range crds {
		if err := createIfMissing(ctx, c, obj); err != nil {
			return err
		}
	}
	for _, obj := range crds {
		if err := waitEstablished(ctx, c, obj.Name); err != nil {
			return err
		}
	}
	objects := []client.Object{
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ServerNamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MachineAPINamespace}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "openshift-config"}},
		// The cluster's pull secret, which the server hands new machines for pulling their OS
		// image (the dev registry needs none; the file shows the path works).
		&corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: "openshift-config", Name: "pull-secret"},
			Type:       corev1.SecretTypeDockerConfigJson,
			Data:       map[string][]byte{corev1.DockerConfigJsonKey: []byte(`{"auths":{"mco-dev.local":{"auth":"ZGV2OmRldg=="}}}`)},
		},
		machineConfiguration(),
	}
	objects = append(objects, bootstrapObjects()...)
	for _, name := range pools.Names {
		pool, err := pools.Builtin(name)
		if err != nil {
			return err
		}
		objects = append(objects, pool, baseConfig(name, network))
	}
	for _, name := range customPools {
		objects = append(objects, CustomPool(name))
	}
	for _, obj := range objects {
		if err := createIfMissing(ctx, c, obj); err != nil {
			return err
		}
	}
	return nil
}

// machineConfiguration is MachineConfiguration cluster with nothing but its management state. It
// is built unstructured because the typed spec serialises empty required sub-structs (such as
// nodeDisruptionPolicy.sshkey) that the CRD's validation rejects.
func machineConfiguration() client.Object {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": operatorv1.GroupVersion.String(),
		"kind":       "MachineConfiguration",
		"metadata":   map[string]any{"name": protocol.ClusterMachineConfiguration},
		"spec":       map[string]any{"managementState": string(operatorv1.Managed)},
	}}
	return u
}

// CustomPool is a pool that inherits every worker MachineConfig and adds its own role's, with
// nodes labelled node-role.kubernetes.io/<name>.
func CustomPool(name string) client.Object {
	pool, _ := pools.Builtin("worker")
	pool.Name = name
	pool.Labels = map[string]string{protocol.PoolLabelPrefix + name: ""}
	pool.Spec.MachineConfigSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
		Key: protocol.RoleLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{protocol.WorkerPool, name},
	}}}
	pool.Spec.NodeSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/" + name: ""}}
	return pool
}

func createIfMissing(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %T %s: %w", obj, obj.GetName(), err)
	}
	return nil
}

func waitEstablished(ctx context.Context, c client.Client, name string) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		var got apiextensionsv1.CustomResourceDefinition
		if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err == nil {
			for _, cond := range got.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					return nil
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("CRD %s not established after 1m", name)
}
