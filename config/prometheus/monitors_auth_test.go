package monitoring

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	servingcertcontroller "github.com/mco-dev/mco/internal/controller/servingcert"
	"github.com/mco-dev/mco/internal/metricsauth"
	"github.com/mco-dev/mco/internal/servingcert"
	"github.com/mco-dev/mco/internal/testenv"
)

const mcoNS = "openshift-machine-config-operator"

// A PodMonitor endpoint's security settings (monitoring.coreos.com/v1).
type securedMonitor struct {
	Metadata metav1.ObjectMeta `json:"metadata"`
	Spec     struct {
		Endpoints []struct {
			Scheme    string `json:"scheme"`
			TLSConfig *struct {
				CA struct {
					ConfigMap *corev1.ConfigMapKeySelector `json:"configMap"`
				} `json:"ca"`
				ServerName         string `json:"serverName"`
				InsecureSkipVerify bool   `json:"insecureSkipVerify"`
			} `json:"tlsConfig"`
			Authorization *struct {
				Type        string                    `json:"type"`
				Credentials *corev1.SecretKeySelector `json:"credentials"`
			} `json:"authorization"`
		} `json:"podMetricsEndpoints"`
	} `json:"spec"`
}

// Every PodMonitor scrapes over HTTPS, verifying the metrics certificate the controller issues
// (its CA bundle, its one name), with the token of a ServiceAccount bound to
// mco-metrics-reader, which grants get /metrics and nothing else; and every scraped container
// serves that certificate from the mounted Secret.
func TestScrapesAreHTTPSWithAToken(t *testing.T) {
	objs := build(t, filepath.Join(testenv.RepoRoot(), "config", "with-prometheus"))
	find := func(kind, ns, name string) *unstructured.Unstructured {
		for _, u := range objs {
			if u.GetKind() == kind && u.GetNamespace() == ns && u.GetName() == name {
				return u
			}
		}
		t.Fatalf("config/with-prometheus has no %s %s/%s", kind, ns, name)
		return nil
	}
	metrics := servingcertcontroller.MetricsObjects
	monitors := 0
	for _, u := range objs {
		if u.GetKind() != "PodMonitor" {
			continue
		}
		monitors++
		var pm securedMonitor
		convert(t, u, &pm)
		for _, ep := range pm.Spec.Endpoints {
			name := pm.Metadata.Name
			if ep.Scheme != "https" {
				t.Errorf("PodMonitor %s: scheme %q, want https", name, ep.Scheme)
			}
			if tc := ep.TLSConfig; tc == nil || tc.InsecureSkipVerify || tc.CA.ConfigMap == nil ||
				tc.CA.ConfigMap.Name != metrics.Bundle || tc.CA.ConfigMap.Key != servingcert.KeyBundle ||
				tc.ServerName != servingcertcontroller.MetricsServerName(mcoNS) {
				t.Errorf("PodMonitor %s: tlsConfig %+v; want the CA of ConfigMap %s key %s, serverName %s, verified",
					name, tc, metrics.Bundle, servingcert.KeyBundle, servingcertcontroller.MetricsServerName(mcoNS))
			}
			if a := ep.Authorization; a == nil || a.Type != "Bearer" || a.Credentials == nil || a.Credentials.Key != corev1.ServiceAccountTokenKey {
				t.Errorf("PodMonitor %s: authorization %+v; want a Bearer token from a service-account-token Secret's key token", name, a)
				continue
			}
			var secret corev1.Secret
			convert(t, find("Secret", mcoNS, ep.Authorization.Credentials.Name), &secret)
			sa := secret.Annotations[corev1.ServiceAccountNameKey]
			if secret.Type != corev1.SecretTypeServiceAccountToken || sa == "" {
				t.Errorf("Secret %s: type %s for ServiceAccount %q; want a service-account-token Secret", secret.Name, secret.Type, sa)
			}
			find("ServiceAccount", mcoNS, sa)
			checkMayOnlyGetMetrics(t, objs, sa)
		}
	}
	if monitors == 0 {
		t.Fatal("no PodMonitor in config/with-prometheus")
	}
	for name, kind := range map[string]string{"mco-controller": "Deployment", "mco-server": "DaemonSet", "mco-daemon": "DaemonSet"} {
		u := find(kind, mcoNS, name)
		var spec corev1.PodSpec
		if u.GetKind() == "Deployment" {
			var d appsv1.Deployment
			convert(t, u, &d)
			spec = d.Spec.Template.Spec
		} else {
			var d appsv1.DaemonSet
			convert(t, u, &d)
			spec = d.Spec.Template.Spec
		}
		checkServesMetricsCert(t, name, spec, metrics.ServingSecret)
	}
}

// checkMayOnlyGetMetrics: sa is bound to ClusterRoles granting get /metrics and nothing else.
func checkMayOnlyGetMetrics(t *testing.T, objs []*unstructured.Unstructured, sa string) {
	t.Helper()
	roles := map[string][]rbacv1.PolicyRule{}
	for _, u := range objs {
		if u.GetKind() == "ClusterRole" {
			var r rbacv1.ClusterRole
			convert(t, u, &r)
			roles[r.Name] = r.Rules
		}
	}
	granted := false
	for _, u := range objs {
		var subjects []rbacv1.Subject
		var ref rbacv1.RoleRef
		switch u.GetKind() {
		case "ClusterRoleBinding":
			var b rbacv1.ClusterRoleBinding
			convert(t, u, &b)
			subjects, ref = b.Subjects, b.RoleRef
		case "RoleBinding":
			var b rbacv1.RoleBinding
			convert(t, u, &b)
			subjects, ref = b.Subjects, b.RoleRef
		default:
			continue
		}
		if !slices.ContainsFunc(subjects, func(s rbacv1.Subject) bool {
			return s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == mcoNS
		}) {
			continue
		}
		for _, r := range roles[ref.Name] {
			if len(r.Resources) > 0 || !slices.Equal(r.NonResourceURLs, []string{"/metrics"}) || !slices.Equal(r.Verbs, []string{"get"}) {
				t.Errorf("%s %s grants %s more than get /metrics: %+v", u.GetKind(), u.GetName(), sa, r)
			} else {
				granted = true
			}
		}
	}
	if !granted {
		t.Errorf("ServiceAccount %s may not get /metrics: bind it to mco-metrics-reader", sa)
	}
}

// checkServesMetricsCert: the container named in spec serves its metrics with the key pair of
// Secret secretName, mounted at its --metrics-cert-dir.
func checkServesMetricsCert(t *testing.T, name string, spec corev1.PodSpec, secretName string) {
	t.Helper()
	c := spec.Containers[0]
	dir := ""
	for _, a := range c.Args { // the last one wins
		if v, ok := strings.CutPrefix(a, "--metrics-cert-dir="); ok {
			dir = v
		}
	}
	if dir == "" {
		t.Errorf("%s: no --metrics-cert-dir: it would serve a self-signed certificate no scraper verifies", name)
		return
	}
	for _, m := range c.VolumeMounts {
		if m.MountPath != dir {
			continue
		}
		for _, v := range spec.Volumes {
			if v.Name == m.Name && v.Secret != nil && v.Secret.SecretName == secretName && len(v.Secret.Items) == 0 {
				return // tls.crt and tls.key (metricsauth.CertFile, KeyFile) as the Secret has them
			}
		}
	}
	t.Errorf("%s: --metrics-cert-dir %s is not a mount of Secret %s (keys %s, %s)", name, dir, secretName, metricsauth.CertFile, metricsauth.KeyFile)
}
