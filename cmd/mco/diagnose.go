//go:build !nodeagent && !mcoserver && !nodev

package main

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/mco-dev/mco/internal/diagnose"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/version"
)

func newDiagnoseCommand() *cobra.Command {
	var kubeconfig, output, devDir string
	var since time.Duration
	cmd := &cobra.Command{
		Use:   "diagnose",
		Short: "Collect pools, nodes, MachineConfigs (secrets redacted), events, logs and journals into a tar.gz for a bug report",
		Long: `Collect into one tar.gz what it takes to tell from afar why a rollout is stuck: every
MachineConfigPool, Node, MachineConfigNode, MachineConfig (the contents of files at
secret-looking paths and password hashes replaced by their sha256; Secrets are never read),
MachineConfiguration, KubeletConfig, ContainerRuntimeConfig and MachineConfigPoolRollout; the
events about them, about Nodes and in mco's namespace; the controller's and server's logs;
each node's agent log; and summary.txt. What cannot be collected is listed in errors.txt.

Logs come from the pods in openshift-machine-config-operator (pods/log); for a dev cluster
(--dev-dir, or a --kubeconfig/$KUBECONFIG that is DIR/kubeconfig of a dev cluster) also from
its host processes' log files and from inside its machines (journalctl). See docs/diagnose.md.`,
		Example: `  mco diagnose --kubeconfig _out/demo/kubeconfig
  mco diagnose --since 3h --output /tmp/worker-stuck.tar.gz`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, cfg, err := scheme.NewClient(kubeconfig)
			if err != nil {
				return err
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			if devDir == "" {
				devDir = diagnose.DevDirFor(cmp.Or(kubeconfig, os.Getenv("KUBECONFIG")))
			}
			pods := diagnose.Pods{Client: cs, Namespace: diagnose.Namespace}
			var logs diagnose.LogSource = pods
			if devDir != "" {
				logs = diagnose.DevCluster{Dir: devDir, Pods: pods}
			}
			now := time.Now()
			if output == "" {
				output = "mco-diagnose-" + now.UTC().Format("20060102-150405") + ".tar.gz"
			}
			b := diagnose.Collect(cmd.Context(), diagnose.Options{
				Client: c, Discovery: cs.Discovery(), Logs: logs, Since: since, Now: now, CLIVersion: version.Get().String(),
			})
			f, err := os.Create(output)
			if err != nil {
				return err
			}
			dir := strings.TrimSuffix(strings.TrimSuffix(filepath.Base(output), ".gz"), ".tar")
			if err := b.WriteTarGz(f, dir, now); err != nil {
				f.Close()
				return fmt.Errorf("writing %s: %w", output, err)
			}
			if err := f.Close(); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (logs from %s)\n", output, logs)
			if n := len(b.Failures()); n > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "%d parts could not be collected; they are listed in %s/%s\n", n, dir, diagnose.ErrorsFile)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)")
	cmd.Flags().StringVarP(&output, "output", "o", "", "the bundle to write (default mco-diagnose-<UTC time>.tar.gz)")
	cmd.Flags().StringVar(&devDir, "dev-dir", "", "the dev cluster's directory (`mco dev up --dir`): logs from its files and machines (default: detected from the kubeconfig's directory)")
	cmd.Flags().DurationVar(&since, "since", time.Hour, "how far back logs, journals and events go")
	return cmd
}
