// Package clientconfig finds the API server for every mco command the same way: an explicit
// --kubeconfig, else $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.
package clientconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/scheme"
)

// Load returns a REST config from kubeconfig if given, else from controller-runtime's defaults.
func Load(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := ctrl.GetConfig()
		if err != nil {
			return nil, fmt.Errorf("no cluster to talk to (give --kubeconfig): %w", err)
		}
		return cfg, nil
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("--kubeconfig %s: %w", kubeconfig, err)
	}
	return cfg, nil
}

// NewClient is Load plus a controller-runtime client that knows mco's types.
func NewClient(kubeconfig string) (client.Client, *rest.Config, error) {
	cfg, err := Load(kubeconfig)
	if err != nil {
		return nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.Scheme})
	return c, cfg, err
}
