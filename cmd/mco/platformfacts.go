//go:build !mcoserver && !nodev

package main

import (
	"github.com/spf13/cobra"

	"github.com/mco-dev/mco/internal/dev/machine/metadata"
)

// newPlatformFactsCommand is the dev machines' platform agent (afterburn's part on a cloud).
func newPlatformFactsCommand() *cobra.Command {
	var metadataPath, root string
	cmd := &cobra.Command{
		Use:   "platform-facts",
		Short: "Dev machines only: write the kubelet's, the CNI's and the agent's platform files from the machine's metadata",
		Long: `On a dev machine, before containerd and the kubelet start, turns the platform metadata
(--metadata) into the files the pool's node units read: the kubelet's environment (node address,
labels), its configuration drop-in (listen on the node address), the pods' CNI network, and the
agent's kubeconfig.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			meta, err := metadata.Read(metadataPath)
			if err != nil {
				return err
			}
			files, err := meta.Facts()
			if err != nil {
				return err
			}
			return metadata.WriteFacts(root, files)
		},
	}
	f := cmd.Flags()
	f.StringVar(&metadataPath, "metadata", metadata.Path, "platform metadata")
	f.StringVar(&root, "root", "/", "root to write under")
	return cmd
}
