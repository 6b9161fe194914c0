package main

import (
	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/clientconfig"
	"github.com/mco-dev/mco/internal/kubeletstandin"
	"github.com/mco-dev/mco/internal/machine/metadata"
)

// newKubeletStandinCommand is the dev machines' stand-in for the kubelet.
func newKubeletStandinCommand() *cobra.Command {
	var kubeconfig, metadataPath string
	opts := kubeletstandin.Options{}
	cmd := &cobra.Command{
		Use:   "kubelet-standin",
		Short: "Dev machines only: a stand-in for the kubelet that registers the Node and reports it Ready while the machine runs",
		Long: `Not a kubelet: it runs no pods. On a dev machine it registers the machine's Node with the
labels in the platform metadata (--metadata), reports it Ready, and reports it NotReady when
the machine shuts down (as the kubelet's graceful node shutdown does).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			meta, err := metadata.Read(metadataPath)
			if err != nil {
				return err
			}
			if opts.NodeName == "" {
				opts.NodeName = meta.Name
			}
			opts.Labels = meta.Labels
			cfg, err := clientconfig.Load(kubeconfig)
			if err != nil {
				return err
			}
			return kubeletstandin.Run(signalContext(), cfg, opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "kubeconfig", "/etc/kubernetes/kubeconfig", "kubeconfig (the one the served config carries)")
	f.StringVar(&metadataPath, "metadata", metadata.Path, "platform metadata: node name and labels")
	f.StringVar(&opts.NodeName, "node", "", "Node name (default: from the metadata)")
	return cmd
}
