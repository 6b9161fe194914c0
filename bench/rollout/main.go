// Command rollout measures a rebootless rollout of one pool of simulated nodes through the real
// `mco controller` process: time from the new target to the pool reporting Updated, API writes
// the controller process made per node update, and its resident memory.
//
//	make bench-rollout            # 1,000 nodes, maxUnavailable 10%
//	go run ./bench/rollout -nodes 200 -max-unavailable 20%
//
// It starts a kube-apiserver and etcd (internal/testenv), runs bin/mco controller against them,
// and answers for the nodes with nodesim's agent in this process, instantly and without drains
// (a rebootless change needs none), writing what the real agent writes per update (Working,
// Done, two MachineConfigNode status writes, an event) unless -agent-report=false. Writes are counted from the controller's own
// rest_client_requests_total metric (POST, PUT, PATCH, DELETE), so events and the render
// controller's few writes are included, from the new target until the pool is Updated, every
// MachineConfigNode desires the target and the controller has been quiet for a second (the
// MachineConfigNode controller's writes may trail the pool). They are broken down by kind from
// the API server's apiserver_request_total less this process's own writes, and the Node writes
// by the controller-owned fields each changed (seen in the agents' watch).
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	operatorv1 "github.com/openshift/api/operator/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/mco-dev/mco/bench/controllerproc"
	"github.com/mco-dev/mco/internal/dev/nodesim"
	"github.com/mco-dev/mco/internal/poolcondition"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/scheme"
	"github.com/mco-dev/mco/internal/testenv"
)

func main() {
	ctrl.SetLogger(logr.Discard())
	nodes := flag.Int("nodes", 1000, "simulated nodes, spread over the pools")
	pools := flag.Int("pools", 1, "pools the nodes are spread over: 1 is the worker pool; more are custom pools bench-0 ... taking worker's MachineConfigs, all rolled out by one change")
	maxUnavailable := flag.String("max-unavailable", "10%", "the pool's maxUnavailable")
	mco := flag.String("mco", filepath.Join(testenv.RepoRoot(), "bin", "mco"), "the mco binary whose controller to run")
	report := flag.Bool("agent-report", true, "simulated agents also write what real ones do besides the protocol step (state Working, MachineConfigNode status, events); false for figures before 2026-11-27")
	profile := flag.String("profile", "", "write CPU profiles of kube-apiserver and of the controller over the rollout's first -profile-seconds to PREFIX-apiserver.pprof and PREFIX-controller.pprof, and the controller's heap after the rollout to PREFIX-controller-heap.pprof")
	flag.IntVar(&profileSeconds, "profile-seconds", 5, "length of the -profile")
	flag.Parse()
	if err := run(*nodes, *pools, intstr.Parse(*maxUnavailable), *mco, *report, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "bench-rollout:", err)
		os.Exit(1)
	}
}

var profileSeconds int

func run(nodeCount, poolCount int, maxUnavailable intstr.IntOrString, mco string, report bool, profile string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	env, err := testenv.Start()
	if err != nil {
		return err
	}
	// The agents' manager stops (ctx) before the API server does, or its event recorder would
	// retry its last events against a closed port.
	defer env.Stop()
	defer cancel()
	own := &countingTransport{counts: writeKinds{}}
	c, err := client.New(own.wrap(env.Config), client.Options{Scheme: scheme.Scheme})
	if err != nil {
		return err
	}

	const role = protocol.WorkerPool
	if err := c.Create(ctx, fileMC("00-bench", role, "v1")); err != nil {
		return err
	}
	// The change is rebootless for real: the cluster's policy for its file is None, so a real
	// agent would neither drain nor reboot for it, as the simulated one does not.
	if err := c.Create(ctx, rebootlessPolicy("/etc/"+changeMC)); err != nil {
		return err
	}
	pools := benchPools(poolCount, nodeCount)
	if err := createPools(ctx, c, pools, maxUnavailable); err != nil {
		return err
	}

	var pprofURL string
	var extra []string
	if profile != "" {
		addr, err := controllerproc.FreeAddr()
		if err != nil {
			return err
		}
		pprofURL, extra = "http://"+addr, []string{"--pprof-bind-address", addr}
	}
	controller, metricsURL, err := controllerproc.Start(ctx, mco, env.KubeconfigPath, "bench-rollout", extra...)
	if err != nil {
		return err
	}
	defer func() { _ = controller.Process.Kill(); _, _ = controller.Process.Wait() }()

	for _, bp := range pools {
		first, err := waitPool(ctx, c, bp.name, func(p *mcfgv1.MachineConfigPool) bool { return p.Spec.Configuration.Name != "" })
		if err != nil {
			return fmt.Errorf("first render of pool %s: %w", bp.name, err)
		}
		bp.initial = first.Spec.Configuration.Name
	}
	start := time.Now()
	if err := createNodes(ctx, c, pools); err != nil {
		return err
	}
	fmt.Printf("created %d nodes in %d pool(s) (%s: %s, ...) in %v\n", nodeCount, len(pools), pools[0].name, pools[0].initial, time.Since(start).Round(time.Millisecond))
	changes := &nodeChanges{counts: writeKinds{}}
	if err := startAgent(ctx, own.wrap(env.Config), changes, report); err != nil {
		return err
	}
	if err := waitPools(ctx, c, pools, func(bp *benchPool) func(*mcfgv1.MachineConfigPool) bool { return updated(bp.initial, bp.nodes) }); err != nil {
		return fmt.Errorf("initial Updated: %w", err)
	}

	// The controllers' work on the new nodes (their MachineConfigNodes, 1,000 creations) goes on
	// after the pool is Updated; counted in the rollout's writes, it would make them depend on
	// how long the rollout waits for its render.
	writesBefore, err := quietWrites(ctx, metricsURL)
	if err != nil {
		return err
	}
	before, err := snapshot(ctx, env.Config, c, own, changes)
	if err != nil {
		return err
	}
	reconcilesBefore, err := reconciles(metricsURL)
	if err != nil {
		return err
	}
	var profiled []<-chan error
	if profile != "" {
		profiled = append(profiled, profileAPIServer(ctx, env.Config, profileSeconds, profile+"-apiserver.pprof"),
			profileURL(ctx, pprofURL, profileSeconds, profile+"-controller.pprof"))
	}
	if err := c.Create(ctx, fileMC(changeMC, role, "v2")); err != nil {
		return err
	}
	for _, bp := range pools {
		second, err := waitPool(ctx, c, bp.name, func(p *mcfgv1.MachineConfigPool) bool { return p.Spec.Configuration.Name != bp.initial })
		if err != nil {
			return fmt.Errorf("second render of pool %s: %w", bp.name, err)
		}
		bp.target = second.Spec.Configuration.Name
	}
	targetSeen, cpuBefore := time.Now(), readCPU()
	if err := waitPools(ctx, c, pools, func(bp *benchPool) func(*mcfgv1.MachineConfigPool) bool { return updated(bp.target, bp.nodes) }); err != nil {
		return fmt.Errorf("rollout: %w", err)
	}
	elapsed, cpuAfter := time.Since(targetSeen), readCPU()
	writesAtUpdated, err := controllerWrites(metricsURL)
	if err != nil {
		return err
	}
	targets := map[string]bool{}
	for _, bp := range pools {
		targets[bp.target] = true
	}
	if err := waitMachineConfigNodes(ctx, c, targets, nodeCount); err != nil {
		return fmt.Errorf("MachineConfigNodes: %w", err)
	}
	mcnsCurrent := time.Since(targetSeen)
	writesAfter, err := quietWrites(ctx, metricsURL)
	if err != nil {
		return err
	}
	after, err := snapshot(ctx, env.Config, c, own, changes)
	if err != nil {
		return err
	}
	reconcilesAfter, err := reconciles(metricsURL)
	if err != nil {
		return err
	}
	for _, done := range profiled {
		if err := <-done; err != nil {
			return fmt.Errorf("profile: %w", err)
		}
	}
	if profile != "" {
		if err := heapProfile(ctx, pprofURL, profile+"-controller-heap.pprof"); err != nil {
			return fmt.Errorf("heap profile: %w", err)
		}
		fmt.Printf("CPU profiles: %s-apiserver.pprof, %s-controller.pprof; the controller's heap after the rollout: %s-controller-heap.pprof\n", profile, profile, profile)
	}
	rss, hwm := memory(controller.Process.Pid)
	writes := writesAfter - writesBefore
	perNode := func(n int) float64 { return float64(n) / float64(nodeCount) }
	fmt.Printf("rollout of %d nodes in %d pool(s), maxUnavailable %s, rebootless, instant agent (reporting as the real one: %v)\n", nodeCount, len(pools), maxUnavailable.String(), report)
	fmt.Printf("  new target -> pools Updated:    %v\n", elapsed.Round(time.Millisecond))
	cpuAfter.print(cpuBefore, elapsed)
	fmt.Printf("  new target -> MCNs current:     %v\n", mcnsCurrent.Round(time.Millisecond))
	fmt.Printf("  controller writes:              %d (%.2f per node update; %.2f by the time the pool was Updated)\n",
		writes, perNode(writes), perNode(writesAtUpdated-writesBefore))
	after.print(before, nodeCount, writes)
	printReconciles(reconcilesBefore, reconcilesAfter)
	fmt.Printf("  controller RSS after / peak:    %.1f MiB / %.1f MiB\n", rss, hwm)
	return nil
}

// changeMC is the MachineConfig the rollout applies; it writes /etc/<changeMC>.
const changeMC = "50-bench-change"

// rebootlessPolicy is MachineConfiguration cluster with the disruption policy None for path.
func rebootlessPolicy(path string) *operatorv1.MachineConfiguration {
	return &operatorv1.MachineConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: protocol.ClusterMachineConfiguration},
		Spec: operatorv1.MachineConfigurationSpec{
			StaticPodOperatorSpec: operatorv1.StaticPodOperatorSpec{OperatorSpec: operatorv1.OperatorSpec{ManagementState: operatorv1.Managed}},
			NodeDisruptionPolicy: operatorv1.NodeDisruptionPolicyConfig{
				Files: []operatorv1.NodeDisruptionPolicySpecFile{{
					Path: path, Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}},
				}},
				// The schema wants the SSH key policy whenever the object names one; this is the default.
				SSHKey: operatorv1.NodeDisruptionPolicySpecSSHKey{Actions: []operatorv1.NodeDisruptionPolicySpecAction{{Type: operatorv1.NoneSpecAction}}},
			},
		},
	}
}

func fileMC(name, role, content string) *mcfgv1.MachineConfig {
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{protocol.RoleLabel: role}},
		Spec: mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: []byte(fmt.Sprintf(
			`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/etc/%s","contents":{"source":"data:,%s"},"mode":420}]}}`, name, content))}},
	}
}

func startAgent(ctx context.Context, cfg *rest.Config, changes *nodeChanges, report bool) error {
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{Scheme: scheme.Scheme, Metrics: metricsserver.Options{BindAddress: "0"}})
	if err != nil {
		return err
	}
	agent := &nodesim.Agent{Client: mgr.GetClient(), Workers: 16, Report: report}
	if err := agent.SetupWithManager(mgr, "bench-agent"); err != nil {
		return err
	}
	if err := changes.watch(ctx, mgr.GetCache()); err != nil {
		return err
	}
	go func() {
		if err := mgr.Start(ctx); err != nil && ctx.Err() == nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
		}
	}()
	return nil
}

func waitPool(ctx context.Context, c client.Client, name string, cond func(*mcfgv1.MachineConfigPool) bool) (*mcfgv1.MachineConfigPool, error) {
	p := &mcfgv1.MachineConfigPool{}
	for {
		if err := c.Get(ctx, client.ObjectKey{Name: name}, p); err == nil && cond(p) {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w; last status %+v", ctx.Err(), p.Status)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func updated(config string, n int) func(*mcfgv1.MachineConfigPool) bool {
	return func(p *mcfgv1.MachineConfigPool) bool {
		return poolcondition.IsTrue(&p.Status, mcfgv1.MachineConfigPoolUpdated) && p.Status.Configuration.Name == config &&
			int(p.Status.UpdatedMachineCount) == n
	}
}

// quietWrites waits until the controller has made no write for a second and returns its count.
func quietWrites(ctx context.Context, url string) (int, error) {
	last := -1
	for {
		n, err := controllerWrites(url)
		if err != nil || n == last {
			return n, err
		}
		last = n
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// controllerWrites sums the controller's rest_client_requests_total over mutating methods.
func controllerWrites(url string) (int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "rest_client_requests_total{") {
			continue
		}
		for _, m := range []string{`method="POST"`, `method="PUT"`, `method="PATCH"`, `method="DELETE"`} {
			if strings.Contains(line, m) {
				v, err := strconv.ParseFloat(line[strings.LastIndex(line, " ")+1:], 64)
				if err != nil {
					return 0, err
				}
				total += v
			}
		}
	}
	return int(total), sc.Err()
}

// memory reads the process's resident set and its peak, in MiB.
func memory(pid int) (rss, peak float64) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(fields[1], 64)
		switch fields[0] {
		case "VmRSS:":
			rss = kb / 1024
		case "VmHWM:":
			peak = kb / 1024
		}
	}
	return rss, peak
}
