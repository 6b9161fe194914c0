package monitoring

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/mco-dev/mco/internal/testenv"
)

// Defaults of --metrics-bind-address (cmd/mco): what a component listens on when the
// manifests do not say.
var defaultMetricsAddress = map[string]string{"controller": ":9191", "server": "127.0.0.1:22625", "daemon": "127.0.0.1:8797"}

type podMonitor struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port string `json:"port"`
			Path string `json:"path"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

type workload struct {
	name string
	meta metav1.ObjectMeta
	spec corev1.PodSpec
}

// config/with-prometheus (config/default plus this component), built with the real kubectl:
// every component's pods are selected by a PodMonitor whose port exists on the container, and
// the container listens for metrics on that port on an address other hosts can reach.
func TestEveryComponentIsScraped(t *testing.T) {
	objs := build(t, filepath.Join(testenv.RepoRoot(), "config", "with-prometheus"))
	var monitors []podMonitor
	var workloads []workload
	rules := 0
	for _, u := range objs {
		switch u.GetKind() {
		case "PodMonitor":
			var pm podMonitor
			convert(t, u, &pm)
			monitors = append(monitors, pm)
		case "PrometheusRule":
			rules++
		case "Deployment":
			var d appsv1.Deployment
			convert(t, u, &d)
			workloads = append(workloads, workload{d.Name, d.Spec.Template.ObjectMeta, d.Spec.Template.Spec})
		case "DaemonSet":
			var d appsv1.DaemonSet
			convert(t, u, &d)
			workloads = append(workloads, workload{d.Name, d.Spec.Template.ObjectMeta, d.Spec.Template.Spec})
		}
	}
	if rules == 0 {
		t.Error("no PrometheusRule in config/with-prometheus")
	}
	scraped := map[string]bool{}
	for _, pm := range monitors {
		sel, err := metav1.LabelSelectorAsSelector(&pm.Spec.Selector)
		if err != nil || sel.Empty() {
			t.Errorf("PodMonitor %s: selector %v: %v", pm.Metadata.Name, pm.Spec.Selector, err)
			continue
		}
		matched := false
		for _, w := range workloads {
			if !sel.Matches(labels.Set(w.meta.Labels)) {
				continue
			}
			matched = true
			for _, ep := range pm.Spec.Endpoints {
				if problem := listensOn(w, ep.Port); problem != "" {
					t.Errorf("PodMonitor %s, %s: %s", pm.Metadata.Name, w.name, problem)
				} else {
					scraped[w.name] = true
				}
				if ep.Path != "/metrics" {
					t.Errorf("PodMonitor %s: path %q, the components serve /metrics", pm.Metadata.Name, ep.Path)
				}
			}
		}
		if !matched {
			t.Errorf("PodMonitor %s selects no workload", pm.Metadata.Name)
		}
	}
	for _, name := range []string{"mco-controller", "mco-server", "mco-daemon"} {
		if !scraped[name] {
			t.Errorf("%s is not scraped", name)
		}
	}
}

// listensOn says what is wrong with scraping the workload's port named port, or "".
func listensOn(w workload, port string) string {
	for _, c := range w.spec.Containers {
		for _, p := range c.Ports {
			if p.Name != port {
				continue
			}
			if w.spec.HostNetwork && p.HostPort != p.ContainerPort {
				return "in the host network the hostPort must be the containerPort"
			}
			component := w.meta.Labels["app.kubernetes.io/component"]
			addr := defaultMetricsAddress[component]
			for _, a := range c.Args { // the last one wins
				if v, ok := strings.CutPrefix(a, "--metrics-bind-address="); ok {
					addr = v
				}
			}
			host, portText, err := net.SplitHostPort(addr)
			if err != nil {
				return "--metrics-bind-address " + addr + ": " + err.Error()
			}
			if n, _ := strconv.Atoi(portText); int32(n) != p.ContainerPort {
				return "metrics are on " + addr + ", the port named " + port + " is " + strconv.Itoa(int(p.ContainerPort))
			}
			if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
				return "metrics listen on " + addr + ", which only the node itself reaches"
			}
			return ""
		}
	}
	return "no container port named " + port
}

// config/default alone ships no monitoring objects: the Prometheus Operator's CRDs are not
// required to install mco.
func TestDefaultInstallNeedsNoPrometheusOperator(t *testing.T) {
	for _, u := range build(t, filepath.Join(testenv.RepoRoot(), "config", "default")) {
		if strings.HasPrefix(u.GetAPIVersion(), "monitoring.coreos.com/") {
			t.Errorf("config/default has %s %s", u.GetKind(), u.GetName())
		}
	}
}

func build(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	kubectl := testenv.RequireTool(t, "kubectl")
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(kubectl, "kustomize", dir)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("kubectl kustomize %s: %v: %s", dir, err, stderr.String())
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&stdout, 4096)
	var out []*unstructured.Unstructured
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return out
			}
			t.Fatalf("decoding kubectl kustomize %s: %v", dir, err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
}

func convert(t *testing.T, u *unstructured.Unstructured, into any) {
	t.Helper()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
}
