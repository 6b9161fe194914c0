package main

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// writeKinds counts API writes by "resource[/subresource] VERB".
type writeKinds map[string]int

// mutating are the verbs the API server counts writes under (APPLY: server-side apply).
var mutating = []string{"POST", "PUT", "PATCH", "DELETE", "APPLY"}

// countingTransport counts the writes this process makes (the simulated agents and the
// benchmark itself), so that what is left of the API server's count is the controller's.
type countingTransport struct {
	mu     sync.Mutex
	counts writeKinds
}

func (c *countingTransport) wrap(cfg *rest.Config) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(req *http.Request) (*http.Response, error) {
			if slices.Contains(mutating, req.Method) {
				c.mu.Lock()
				c.counts[kindOfPath(req.URL.Path)+" "+req.Method]++
				c.mu.Unlock()
			}
			return rt.RoundTrip(req)
		})
	})
	return out
}

func (c *countingTransport) snapshot() writeKinds {
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.counts)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// kindOfPath is "resource[/subresource]" of an API path: /api/v1/nodes/n,
// /apis/g/v/namespaces/ns/events, /apis/g/v/machineconfigpools/p/status.
func kindOfPath(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		parts = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		parts = parts[3:]
	default:
		return path
	}
	if len(parts) >= 3 && parts[0] == "namespaces" {
		parts = parts[2:]
	}
	switch len(parts) {
	case 0:
		return path
	case 1, 2:
		return parts[0]
	default:
		return parts[0] + "/" + parts[2]
	}
}

// apiServerWrites reads the API server's apiserver_request_total for mutating verbs, from all
// clients, by kind.
func apiServerWrites(ctx context.Context, cfg *rest.Config) (writeKinds, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	body, err := cs.RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("API server metrics: %w", err)
	}
	out := writeKinds{}
	sc := bufio.NewScanner(strings.NewReader(string(body)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		end := strings.LastIndex(line, "}")
		labels := metricLabels(line[len("apiserver_request_total{"):end])
		if !slices.Contains(mutating, labels["verb"]) {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, fmt.Errorf("API server metrics: %q: %w", line, err)
		}
		kind := labels["resource"]
		if s := labels["subresource"]; s != "" {
			kind += "/" + s
		}
		out[kind+" "+labels["verb"]] += int(v)
	}
	return out, sc.Err()
}

// metricLabels parses `a="x",b="y"` (values without quotes or commas, as these labels are).
func metricLabels(s string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if ok {
			out[k] = strings.Trim(v, `"`)
		}
	}
	return out
}

// minus returns a − b − ..., dropping kinds that come to zero.
func (a writeKinds) minus(bs ...writeKinds) writeKinds {
	out := maps.Clone(a)
	for _, b := range bs {
		for k, v := range b {
			out[k] -= v
		}
	}
	maps.DeleteFunc(out, func(_ string, v int) bool { return v == 0 })
	return out
}

func (a writeKinds) total() int {
	n := 0
	for _, v := range a {
		n += v
	}
	return n
}

// print lists the kinds, largest first, with their share per node update.
func (a writeKinds) print(indent string, nodes int) {
	keys := slices.Collect(maps.Keys(a))
	slices.SortFunc(keys, func(x, y string) int {
		if a[x] != a[y] {
			return a[y] - a[x]
		}
		return strings.Compare(x, y)
	})
	for _, k := range keys {
		fmt.Printf("%s%-44s %6d  %.3f per node update\n", indent, k, a[k], float64(a[k])/float64(nodes))
	}
}

// snapshotAt is every write count at one moment.
type snapshotAt struct {
	apiServer, own, nodeFields writeKinds
	// mcnGenerations sums the MachineConfigNodes' generations: a write that changed a spec
	// raised it by one.
	mcnGenerations int64
}

func snapshot(ctx context.Context, cfg *rest.Config, c client.Client, own *countingTransport, changes *nodeChanges) (snapshotAt, error) {
	s := snapshotAt{own: own.snapshot(), nodeFields: changes.snapshot()}
	var err error
	if s.apiServer, err = apiServerWrites(ctx, cfg); err != nil {
		return s, err
	}
	var mcns mcfgv1.MachineConfigNodeList
	if err := c.List(ctx, &mcns); err != nil {
		return s, err
	}
	for _, m := range mcns.Items {
		s.mcnGenerations += m.Generation
	}
	return s, nil
}

// print breaks down the controller's writes between before and s.
func (s snapshotAt) print(before snapshotAt, nodes, controllerCounted int) {
	byKind := s.apiServer.minus(before.apiServer, s.own.minus(before.own))
	fmt.Printf("  by kind (API server's count less this process's writes):\n")
	byKind.print("    ", nodes)
	if byKind.total() != controllerCounted {
		fmt.Printf("    (%d in all; the controller counted %d: the rest are the API server's own, e.g. its lease)\n", byKind.total(), controllerCounted)
	}
	fields := s.nodeFields.minus(before.nodeFields)
	fmt.Printf("  Node writes by the controller-owned fields they changed:\n")
	fields.print("    ", nodes)
	if unchanged := byKind["nodes PATCH"] + byKind["nodes PUT"] - fields.total(); unchanged != 0 {
		fmt.Printf("    %-44s %6d\n", "nodes, no field changed", unchanged)
	}
	specs := int(s.mcnGenerations - before.mcnGenerations)
	fmt.Printf("  MachineConfigNode spec changes:  %d", specs)
	if unchanged := byKind["machineconfignodes PATCH"] + byKind["machineconfignodes PUT"] - specs; unchanged != 0 {
		fmt.Printf(" (%d writes changed no spec)", unchanged)
	}
	fmt.Println()
}

// waitMachineConfigNodes waits until n MachineConfigNodes desire one of the configs.
func waitMachineConfigNodes(ctx context.Context, c client.Client, configs map[string]bool, n int) error {
	for {
		var mcns mcfgv1.MachineConfigNodeList
		current := 0
		if err := c.List(ctx, &mcns); err == nil {
			for _, m := range mcns.Items {
				if configs[m.Spec.ConfigVersion.Desired] {
					current++
				}
			}
			if current == n {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w; %d of %d desire one of %v", ctx.Err(), current, n, slices.Sorted(maps.Keys(configs)))
		case <-time.After(250 * time.Millisecond): // each list is every object whole: poll gently
		}
	}
}

// reconciles sums the controller's controller_runtime_reconcile_total by controller.
func reconciles(url string) (map[string]int, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]int{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "controller_runtime_reconcile_total{") {
			continue
		}
		end := strings.LastIndex(line, "}")
		v, err := strconv.ParseFloat(strings.TrimSpace(line[end+1:]), 64)
		if err != nil {
			return nil, err
		}
		out[metricLabels(line[len("controller_runtime_reconcile_total{"):end])["controller"]] += int(v)
	}
	return out, sc.Err()
}

// printReconciles shows the reconciles per controller between before and after, most first.
func printReconciles(before, after map[string]int) {
	names := slices.Collect(maps.Keys(after))
	slices.SortFunc(names, func(a, b string) int { return (after[b] - before[b]) - (after[a] - before[a]) })
	var parts []string
	for _, n := range names {
		if d := after[n] - before[n]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", n, d))
		}
	}
	fmt.Printf("  controller reconciles:          %s\n", strings.Join(parts, ", "))
}
