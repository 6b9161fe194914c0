// Package clientconfig finds the API server for every mco command the same way: an explicit
// --kubeconfig, else $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.
// It links only client-go: the node build of mco (agent, first boot) uses it.
package clientconfig

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
)

// Load returns a REST config from kubeconfig if given, else from controller-runtime's defaults.
func Load(kubeconfig string) (*rest.Config, error) {
	if kubeconfig == "" {
		cfg, err := config.GetConfig()
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
