package registries

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	"github.com/vincent-petithory/dataurl"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/coreos/ignition/v2/config/v3_5/types"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/ignition"
	"github.com/mco-dev/mco/internal/registries"
	"github.com/mco-dev/mco/internal/testenv"
)

// OpenShift's registries.conf for docs/ImageMirrorSetDesign.md's ImageDigestMirrorSet over its
// template's base (internal/registries/testdata/openshift/docs-idms-never-contact-source.json).
const docsRegistriesConf = `unqualified-search-registries = ["registry.access.redhat.com", "docker.io"]
short-name-mode = ""
additional-layer-store-auth-helper = ""

[[registry]]
  prefix = ""
  location = "registry.access.redhat.com/ubi8/ubi-minimal"
  blocked = true

  [[registry.mirror]]
    location = "example.io/digest-example/ubi-minimal"
    pull-from-mirror = "digest-only"
`

// The scenarios run in order against one control plane: each builds on the state the last left.
func TestRegistriesLifecycle(t *testing.T) {
	testenv.Integration(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	for _, name := range pools.Names {
		p, err := pools.Builtin(name)
		must(t, err)
		must(t, k8sClient.Create(ctx, p))
	}
	infra := &mcfgv1.MachineConfigPool{ObjectMeta: metav1.ObjectMeta{Name: "infra"}, Spec: mcfgv1.MachineConfigPoolSpec{
		MachineConfigSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "machineconfiguration.openshift.io/role", Operator: metav1.LabelSelectorOpIn, Values: []string{"worker", "infra"}}}},
		NodeSelector:          &metav1.LabelSelector{MatchLabels: map[string]string{"node-role.kubernetes.io/infra": ""}}}}
	must(t, k8sClient.Create(ctx, infra))
	// The worker pool's base, as an installer provides it (OpenShift's template); master has
	// none, so it gets the built-in default.
	must(t, k8sClient.Create(ctx, fileMC("01-worker-container-runtime", "worker", registries.RegistriesConfPath,
		"unqualified-search-registries = ['registry.access.redhat.com', 'docker.io']\n")))

	t.Run("nothing configured, nothing generated", func(t *testing.T) {
		time.Sleep(time.Second)
		assertNoMC(t, ctx, "99-worker-generated-registries")
	})

	t.Run("an ImageDigestMirrorSet gives each built-in pool OpenShift's registries.conf", func(t *testing.T) {
		idms := &apicfgv1.ImageDigestMirrorSet{}
		must(t, yaml.UnmarshalStrict([]byte(`
metadata: {name: digest-mirror}
spec:
  imageDigestMirrors:
  - mirrors: [example.io/digest-example/ubi-minimal]
    source: registry.access.redhat.com/ubi8/ubi-minimal
    mirrorSourcePolicy: NeverContactSource`), idms))
		must(t, k8sClient.Create(ctx, idms))
		worker := waitMC(t, ctx, "99-worker-generated-registries", func(*mcfgv1.MachineConfig) bool { return true })
		if got := filesOf(t, worker); got[registries.RegistriesConfPath] != docsRegistriesConf || len(got) != 1 {
			t.Errorf("worker files %v, want OpenShift's registries.conf only:\n%s", got, docsRegistriesConf)
		}
		master := waitMC(t, ctx, "99-master-generated-registries", func(*mcfgv1.MachineConfig) bool { return true })
		conf := filesOf(t, master)[registries.RegistriesConfPath]
		if !strings.HasPrefix(conf, `unqualified-search-registries = ["docker.io"]`) || !strings.Contains(conf, `location = "example.io/digest-example/ubi-minimal"`) {
			t.Errorf("master's registries.conf is not the mirror over the built-in default:\n%s", conf)
		}
		for _, mc := range []*mcfgv1.MachineConfig{worker, master} {
			if len(mc.OwnerReferences) != 0 || mc.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != testVersion {
				t.Errorf("%s metadata %+v", mc.Name, mc.ObjectMeta)
			}
		}
		// A custom pool inherits worker's through its selector, as on OpenShift.
		assertNoMC(t, ctx, "99-infra-generated-registries")
	})

	t.Run("blocked registries in image.config reach policy.json", func(t *testing.T) {
		img := &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: apicfgv1.ImageSpec{RegistrySources: apicfgv1.RegistrySources{BlockedRegistries: []string{"blocked.example.com", "docker.io"}}}}
		must(t, k8sClient.Create(ctx, img))
		mc := waitMC(t, ctx, "99-worker-generated-registries", func(mc *mcfgv1.MachineConfig) bool { return len(filesOf(t, mc)) == 2 })
		policy := filesOf(t, mc)[registries.PolicyJSONPath]
		var p struct {
			Default    []map[string]string                       `json:"default"`
			Transports map[string]map[string][]map[string]string `json:"transports"`
		}
		must(t, json.Unmarshal([]byte(policy), &p))
		if p.Default[0]["type"] != "insecureAcceptAnything" || p.Transports["docker"]["docker.io"][0]["type"] != "reject" ||
			p.Transports["atomic"]["blocked.example.com"][0]["type"] != "reject" || p.Transports["docker-daemon"][""][0]["type"] != "insecureAcceptAnything" {
			t.Errorf("policy.json:\n%s", policy)
		}
		if !strings.Contains(filesOf(t, mc)[registries.RegistriesConfPath], "location = \"docker.io\"\n  blocked = true") {
			t.Errorf("registries.conf does not block docker.io:\n%s", filesOf(t, mc)[registries.RegistriesConfPath])
		}
		if len(mc.OwnerReferences) != 1 || mc.OwnerReferences[0].Kind != "Image" || mc.OwnerReferences[0].UID != img.UID {
			t.Errorf("owners %+v", mc.OwnerReferences)
		}
	})

	t.Run("a refused input changes nothing and is reported on the object", func(t *testing.T) {
		before := getMC(t, ctx, "99-worker-generated-registries")
		itms := &apicfgv1.ImageTagMirrorSet{}
		must(t, yaml.UnmarshalStrict([]byte(`
metadata: {name: conflicting}
spec:
  imageTagMirrors:
  - mirrors: [tags.example.io/ubi-minimal]
    source: registry.access.redhat.com/ubi8/ubi-minimal
    mirrorSourcePolicy: AllowContactingSource`), itms))
		must(t, k8sClient.Create(ctx, itms))
		ev := waitEvent(t, ctx, "conflicting", ReasonRefused)
		if !strings.Contains(ev.Message, "ImageTagMirrorSet conflicting: spec.imageTagMirrors[0].mirrorSourcePolicy") ||
			!strings.Contains(ev.Message, "ImageDigestMirrorSet digest-mirror") {
			t.Errorf("event %q does not name both objects and the field", ev.Message)
		}
		if after := getMC(t, ctx, before.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("MachineConfig changed after a refused input")
		}
		must(t, k8sClient.Delete(ctx, itms))
	})

	t.Run("a MachineConfig deleted by hand is put back", func(t *testing.T) {
		mc := getMC(t, ctx, "99-master-generated-registries")
		must(t, k8sClient.Delete(ctx, mc))
		waitMC(t, ctx, mc.Name, func(n *mcfgv1.MachineConfig) bool { return n.UID != mc.UID })
	})

	t.Run("with the image config gone and no mirror set the MachineConfigs go", func(t *testing.T) {
		must(t, k8sClient.Delete(ctx, &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}))
		// Only the mirror set is left: registries.conf without the blocks, no policy.json.
		waitMC(t, ctx, "99-worker-generated-registries", func(mc *mcfgv1.MachineConfig) bool {
			files := filesOf(t, mc)
			return len(files) == 1 && files[registries.RegistriesConfPath] == docsRegistriesConf
		})
		must(t, k8sClient.Delete(ctx, &apicfgv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "digest-mirror"}}))
		waitGone(t, ctx, "99-worker-generated-registries")
		waitGone(t, ctx, "99-master-generated-registries")
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func fileMC(name, role, path, contents string) *mcfgv1.MachineConfig {
	cfg := ignition.Empty()
	cfg.Storage.Files = append(cfg.Storage.Files, types.File{Node: types.Node{Path: path},
		FileEmbedded1: types.FileEmbedded1{Mode: ptr.To(0o644), Contents: types.Resource{Source: ptr.To(dataurl.EncodeBytes([]byte(contents)))}}})
	raw, _ := json.Marshal(cfg)
	return &mcfgv1.MachineConfig{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"machineconfiguration.openshift.io/role": role}},
		Spec:       mcfgv1.MachineConfigSpec{Config: runtime.RawExtension{Raw: raw}},
	}
}

func getMC(t *testing.T, ctx context.Context, name string) *mcfgv1.MachineConfig {
	t.Helper()
	mc := &mcfgv1.MachineConfig{}
	must(t, k8sClient.Get(ctx, client.ObjectKey{Name: name}, mc))
	return mc
}

func waitMC(t *testing.T, ctx context.Context, name string, ok func(*mcfgv1.MachineConfig) bool) *mcfgv1.MachineConfig {
	t.Helper()
	var mc *mcfgv1.MachineConfig
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		mc = &mcfgv1.MachineConfig{}
		if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, mc); err != nil {
			return false, client.IgnoreNotFound(err)
		}
		return ok(mc), nil
	})
	if err != nil {
		t.Fatalf("waiting for MachineConfig %s: %v", name, err)
	}
	return mc
}

func assertNoMC(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, &mcfgv1.MachineConfig{}); !apierrors.IsNotFound(err) {
		t.Errorf("MachineConfig %s: %v, want none", name, err)
	}
}

func waitGone(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKey{Name: name}, &mcfgv1.MachineConfig{})), nil
	})
	if err != nil {
		t.Fatalf("waiting for MachineConfig %s to go: %v", name, err)
	}
}

func waitEvent(t *testing.T, ctx context.Context, object, reason string) corev1.Event {
	t.Helper()
	var found corev1.Event
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		var events corev1.EventList
		if err := k8sClient.List(ctx, &events); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == object && e.Reason == reason {
				found = e
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatalf("waiting for a %s event on %s: %v", reason, object, err)
	}
	return found
}

// filesOf decodes a generated MachineConfig's files (base64 data URLs).
func filesOf(t *testing.T, mc *mcfgv1.MachineConfig) map[string]string {
	t.Helper()
	cfg, err := ignition.Parse(mc.Spec.Config.Raw)
	must(t, err)
	out := map[string]string{}
	for _, f := range cfg.Storage.Files {
		src := *f.Contents.Source
		data, err := base64.StdEncoding.DecodeString(src[strings.Index(src, ",")+1:])
		must(t, err)
		out[f.Path] = string(data)
	}
	return out
}
