// Package scheme holds the one runtime.Scheme every mco component uses: the Kubernetes core
// types plus the OpenShift API groups mco speaks (machineconfiguration, operator, machine, config).
package scheme

import (
	configv1 "github.com/openshift/api/config/v1"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	operatorv1alpha1 "github.com/openshift/api/operator/v1alpha1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	rolloutv1 "github.com/mco-dev/mco/api/rollout/v1alpha1"
	"github.com/mco-dev/mco/internal/clientconfig"
)

// Scheme knows every type mco reads or writes.
var Scheme = New()

// New builds a fresh scheme; most callers want the shared Scheme.
func New() *runtime.Scheme {
	s := runtime.NewScheme()
	utilruntime.Must(clientgoscheme.AddToScheme(s))
	utilruntime.Must(apiextensionsv1.AddToScheme(s))
	utilruntime.Must(mcfgv1.Install(s))
	utilruntime.Must(operatorv1.Install(s))
	utilruntime.Must(machinev1beta1.Install(s))
	// Image mirrors, image registry policy and, on OpenShift, ClusterOperator and APIServer.
	utilruntime.Must(configv1.Install(s))
	// The legacy ImageContentSourcePolicy.
	utilruntime.Must(operatorv1alpha1.Install(s))
	// mco's own: the MachineConfigPoolRollout pacing policy.
	utilruntime.Must(rolloutv1.AddToScheme(s))
	return s
}

// NewClient loads kubeconfig as every command does (clientconfig.Load) and returns a
// controller-runtime client that knows mco's types.
func NewClient(kubeconfig string) (client.Client, *rest.Config, error) {
	cfg, err := clientconfig.Load(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: Scheme})
	return c, cfg, err
}
