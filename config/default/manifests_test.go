package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	mcoNS    = "openshift-machine-config-operator"
	mapiNS   = "openshift-machine-api"
	ocNS     = "openshift-config"
	image    = "ghcr.io/mco-dev/mco"
	rootfs   = "/rootfs"
	tlsMount = "/etc/mcs/tls"
)

func typed[T any](t *testing.T, u *unstructured.Unstructured) *T {
	t.Helper()
	out := new(T)
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(u.Object, out, true); err != nil {
		t.Fatalf("%s %s: %v", u.GetKind(), u.GetName(), err)
	}
	return out
}

// Every CRD of config/crd (what `make crds` copies) and every built-in pool is installed, by
// reference: a CRD added to hack/crds.txt but not to config/crd/Kustomization fails here.
func TestInstallsEveryCRDAndPool(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(testenv.RepoRoot(), "config", "crd", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in config/crd: %v", err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd apiextensionsv1.CustomResourceDefinition
		if err := yaml.Unmarshal(data, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got := find(t, "CustomResourceDefinition", "", crd.Name)
		if typed[apiextensionsv1.CustomResourceDefinition](t, got).Spec.Group != crd.Spec.Group {
			t.Errorf("CRD %s differs from %s", crd.Name, f)
		}
	}
	for _, name := range pools.Names {
		find(t, "MachineConfigPool", "", name)
	}
	find(t, "Namespace", "", mcoNS)
	find(t, "Namespace", "", mapiNS)
	find(t, "Namespace", "", ocNS)
	find(t, "MachineConfiguration", "", "cluster")
}

// One image for every container, overridable with kustomize's images.
func TestOneImage(t *testing.T) {
	for _, w := range workloads(t) {
		for _, c := range w.spec.Containers {
			if !strings.HasPrefix(c.Image, image+":") {
				t.Errorf("%s container %s runs %q, want %s:<tag>", w.name, c.Name, c.Image, image)
			}
		}
	}
}

func TestControllerDeployment(t *testing.T) {
	d := typed[appsv1.Deployment](t, find(t, "Deployment", mcoNS, "mco-controller"))
	spec := d.Spec.Template.Spec
	if spec.ServiceAccountName != "mco-controller" {
		t.Errorf("service account %q", spec.ServiceAccountName)
	}
	c := spec.Containers[0]
	if len(c.Args) == 0 || c.Args[0] != "controller" || !slices.Contains(c.Args, "--leader-elect") {
		t.Errorf("args %q: want `controller --leader-elect ...`", c.Args)
	}
	// Probes must hit the port --health-probe-bind-address listens on.
	probePort := flagValue(c.Args, "--health-probe-bind-address")
	if probePort == "" {
		t.Fatal("no --health-probe-bind-address: the probes would depend on the flag's default")
	}
	want := atoi(t, probePort[strings.LastIndex(probePort, ":")+1:])
	for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Fatalf("no HTTP %s probe", name)
		}
		port := p.HTTPGet.Port.IntValue()
		for _, cp := range c.Ports {
			if cp.Name == p.HTTPGet.Port.String() {
				port = int(cp.ContainerPort)
			}
		}
		if port != want {
			t.Errorf("%s probe goes to port %d, --health-probe-bind-address is %s", name, port, probePort)
		}
	}
	if path := c.LivenessProbe.HTTPGet.Path; path != "/healthz" {
		t.Errorf("liveness path %s", path)
	}
	if path := c.ReadinessProbe.HTTPGet.Path; path != "/readyz" {
		t.Errorf("readiness path %s", path)
	}
}

func TestServerDaemonSet(t *testing.T) {
	ds := typed[appsv1.DaemonSet](t, find(t, "DaemonSet", mcoNS, "mco-server"))
	spec := ds.Spec.Template.Spec
	if spec.ServiceAccountName != "mco-server" || !spec.HostNetwork {
		t.Errorf("service account %q, hostNetwork %v", spec.ServiceAccountName, spec.HostNetwork)
	}
	// The control plane as OpenShift labels it, and as kubeadm does; never a worker.
	for _, tc := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{"node-role.kubernetes.io/master": "", "node-role.kubernetes.io/control-plane": ""}, true},
		{map[string]string{"node-role.kubernetes.io/master": ""}, true},
		{map[string]string{"node-role.kubernetes.io/control-plane": ""}, true},
		{map[string]string{"node-role.kubernetes.io/worker": ""}, false},
		{map[string]string{"kubernetes.io/os": "linux"}, false},
	} {
		if got := schedulesOn(t, &spec, tc.labels); got != tc.want {
			t.Errorf("server pod schedules on a node labelled %v: %v, want %v", tc.labels, got, tc.want)
		}
	}
	if !tolerates(spec.Tolerations, corev1.Taint{Key: "node-role.kubernetes.io/master", Effect: corev1.TaintEffectNoSchedule}) ||
		!tolerates(spec.Tolerations, corev1.Taint{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}) {
		t.Errorf("tolerations %v do not admit control-plane nodes", spec.Tolerations)
	}
	c := spec.Containers[0]
	if c.Args[0] != "server" {
		t.Errorf("args %q", c.Args)
	}
	var ports []int32
	for _, p := range c.Ports {
		ports = append(ports, p.ContainerPort)
		if p.HostPort != p.ContainerPort {
			t.Errorf("port %d: hostPort %d", p.ContainerPort, p.HostPort)
		}
	}
	// HTTPS only: tokens and the bootstrap kubeconfig never cross the network in clear.
	if !slices.Equal(ports, []int32{22623}) {
		t.Errorf("ports %v, want 22623 only", ports)
	}
	if flagValue(c.Args, "--secure-port") != "22623" || flagValue(c.Args, "--insecure-port") != "0" {
		t.Errorf("args %q: want --secure-port=22623 and --insecure-port=0", c.Args)
	}
	for name, probe := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if probe == nil || probe.HTTPGet == nil || probe.HTTPGet.Port.IntValue() != 22623 || probe.HTTPGet.Path != "/healthz" || probe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
			t.Errorf("%s probe %+v: want GET https /healthz on 22623", name, probe)
		}
	}
	// The TLS Secret is mounted where the flags look for it.
	var secretVolume string
	for _, v := range spec.Volumes {
		if v.Secret != nil && v.Secret.SecretName == "machine-config-server-tls" {
			secretVolume = v.Name
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		if m.Name == secretVolume && m.MountPath == tlsMount && m.ReadOnly {
			mounted = true
		}
	}
	if secretVolume == "" || !mounted {
		t.Errorf("Secret machine-config-server-tls not mounted read-only at %s", tlsMount)
	}
	if flagValue(c.Args, "--tls-cert-file") != tlsMount+"/tls.crt" || flagValue(c.Args, "--tls-private-key-file") != tlsMount+"/tls.key" {
		t.Errorf("args %q do not use the mounted certificate", c.Args)
	}
	assertNoWrites(t, "server", c)
}

func TestDaemonDaemonSet(t *testing.T) {
	ds := typed[appsv1.DaemonSet](t, find(t, "DaemonSet", mcoNS, "mco-daemon"))
	spec := ds.Spec.Template.Spec
	if spec.ServiceAccountName != "mco-daemon" || !spec.HostPID {
		t.Errorf("service account %q, hostPID %v", spec.ServiceAccountName, spec.HostPID)
	}
	c := spec.Containers[0]
	if c.SecurityContext == nil || c.SecurityContext.Privileged == nil || !*c.SecurityContext.Privileged {
		t.Error("the agent is not privileged")
	}
	if c.Args[0] != "daemon" || flagValue(c.Args, "--root") != rootfs {
		t.Errorf("args %q: want `daemon --root %s`", c.Args, rootfs)
	}
	// --node comes from the downward API.
	if n := flagValue(c.Args, "--node"); n != "$(NODE_NAME)" {
		t.Errorf("--node %q, want $(NODE_NAME)", n)
	}
	fromSpec := false
	for _, e := range c.Env {
		if e.Name == "NODE_NAME" && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil && e.ValueFrom.FieldRef.FieldPath == "spec.nodeName" {
			fromSpec = true
		}
	}
	if !fromSpec {
		t.Error("NODE_NAME is not the downward API's spec.nodeName")
	}
	// The host root at /rootfs.
	hostRoot := ""
	for _, v := range spec.Volumes {
		if v.HostPath != nil && v.HostPath.Path == "/" {
			hostRoot = v.Name
		}
	}
	mounted := false
	for _, m := range c.VolumeMounts {
		mounted = mounted || (m.Name == hostRoot && m.MountPath == rootfs && !m.ReadOnly)
	}
	if hostRoot == "" || !mounted {
		t.Errorf("host / not mounted writable at %s", rootfs)
	}
	// Every node, whatever its taints: one toleration with no key and operator Exists.
	all := slices.ContainsFunc(spec.Tolerations, func(tol corev1.Toleration) bool {
		return tol.Key == "" && tol.Operator == corev1.TolerationOpExists && tol.Effect == ""
	})
	if !all {
		t.Errorf("tolerations %v do not tolerate every taint", spec.Tolerations)
	}
	ru := ds.Spec.UpdateStrategy.RollingUpdate
	if ru == nil || ru.MaxUnavailable == nil || ru.MaxUnavailable.String() != "10%" {
		t.Errorf("update strategy %+v, want maxUnavailable 10%%", ds.Spec.UpdateStrategy)
	}
}

// Only the agent is privileged or runs as root; the controller and the server cannot write
// their file system or gain privileges.
func TestOnlyTheAgentIsPrivileged(t *testing.T) {
	for _, w := range workloads(t) {
		if w.name == "mco-daemon" {
			continue
		}
		pod := w.spec.SecurityContext
		if pod == nil || pod.RunAsNonRoot == nil || !*pod.RunAsNonRoot || w.spec.HostPID {
			t.Errorf("%s may run as root", w.name)
		}
		for _, c := range w.spec.Containers {
			assertNoWrites(t, w.name, c)
		}
	}
}

func assertNoWrites(t *testing.T, name string, c corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil || sc.Privileged != nil && *sc.Privileged || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("%s: container %s is not locked down (privileged, escalation, writable root or capabilities)", name, c.Name)
	}
}

// Every flag the manifests pass exists in the mco binary: cobra rejects an unknown flag even
// with --help, so `mco <args> --help` succeeds exactly when all of them parse.
func TestFlagsExist(t *testing.T) {
	mco := testenv.RequireMCO(t)
	for _, w := range workloads(t) {
		for _, c := range w.spec.Containers {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			out, err := exec.CommandContext(ctx, mco, append(append([]string{}, c.Args...), "--help")...).CombinedOutput()
			cancel()
			if err != nil {
				t.Errorf("%s: mco %s: %v\n%s", w.name, strings.Join(c.Args, " "), err, out)
			}
		}
	}
}

// The API server accepts everything (strict field validation: a misspelt field fails), and a
// second server-side dry-run apply finds nothing to conflict with.
func TestAppliesToAPIServer(t *testing.T) {
	e := requireEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := e.Kubectl(ctx, "apply", "--server-side", "--field-manager=mco-install", "--validate=strict", "--dry-run=server", "-k", dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objects(t) {
		if !strings.Contains(out, strings.ToLower(o.GetKind())) {
			t.Errorf("dry-run output does not mention %s %s:\n%s", o.GetKind(), o.GetName(), out)
		}
	}
	// What was applied is there, in its namespace.
	for _, o := range objects(t) {
		args := []string{"get", strings.ToLower(o.GetKind()) + "." + o.GroupVersionKind().Group, o.GetName(), "-o", "name"}
		if o.GroupVersionKind().Group == "" {
			args[1] = strings.ToLower(o.GetKind())
		}
		if ns := o.GetNamespace(); ns != "" {
			args = append(args, "-n", ns)
		}
		if _, err := e.Kubectl(ctx, args...); err != nil {
			t.Errorf("%s %s/%s not installed: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
		}
	}
}

type workload struct {
	name string
	spec corev1.PodSpec
}

func workloads(t *testing.T) []workload {
	t.Helper()
	var out []workload
	for _, o := range objects(t) {
		switch o.GetKind() {
		case "Deployment":
			out = append(out, workload{o.GetName(), typed[appsv1.Deployment](t, o).Spec.Template.Spec})
		case "DaemonSet":
			out = append(out, workload{o.GetName(), typed[appsv1.DaemonSet](t, o).Spec.Template.Spec})
		case "StatefulSet", "Job", "CronJob", "Pod", "ReplicaSet":
			t.Errorf("unexpected workload %s %s: teach this test about it", o.GetKind(), o.GetName())
		}
	}
	if len(out) != 3 {
		t.Fatalf("%d workloads, want the controller, the server and the agent", len(out))
	}
	return out
}

// flagValue returns the value of --name=value or --name value in args.
func flagValue(args []string, name string) string {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func tolerates(tols []corev1.Toleration, taint corev1.Taint) bool {
	return slices.ContainsFunc(tols, func(tol corev1.Toleration) bool {
		keyOK := tol.Key == taint.Key || tol.Key == "" && tol.Operator == corev1.TolerationOpExists
		return keyOK && (tol.Effect == "" || tol.Effect == taint.Effect) &&
			(tol.Operator == corev1.TolerationOpExists || tol.Value == taint.Value)
	})
}

// schedulesOn reports whether the pod's nodeSelector and required node affinity admit a node
// with these labels, as the scheduler reads them (terms ORed, a term's expressions ANDed).
func schedulesOn(t *testing.T, spec *corev1.PodSpec, nodeLabels map[string]string) bool {
	t.Helper()
	set := labels.Set(nodeLabels)
	if !labels.SelectorFromSet(spec.NodeSelector).Matches(set) {
		return false
	}
	if spec.Affinity == nil || spec.Affinity.NodeAffinity == nil || spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return true
	}
	for _, term := range spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		sel := &metav1.LabelSelector{}
		for _, e := range term.MatchExpressions {
			sel.MatchExpressions = append(sel.MatchExpressions, metav1.LabelSelectorRequirement{Key: e.Key, Operator: metav1.LabelSelectorOperator(e.Operator), Values: e.Values})
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		if err != nil {
			t.Fatalf("node affinity term %v: %v", term, err)
		}
		if s.Matches(set) {
			return true
		}
	}
	return false
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n := 0
	for _, r := range s {
		if r < '0' || r > '9' {
			t.Fatalf("not a port: %q", s)
		}
		n = n*10 + int(r-'0')
	}
	return n
}
