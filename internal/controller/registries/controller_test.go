package registries

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	apicfgv1 "github.com/openshift/api/config/v1"
	mcfgv1 "github.com/openshift/api/machineconfiguration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"

	"github.com/mco-dev/mco/config/pools"
	"github.com/mco-dev/mco/internal/generatedmc/mctest"
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
	must(t, k8sClient.Create(ctx, mctest.FileMC("01-worker-container-runtime", "worker", registries.RegistriesConfPath,
		"unqualified-search-registries = ['registry.access.redhat.com', 'docker.io']\n")))

	t.Run("nothing configured, nothing generated", func(t *testing.T) {
		time.Sleep(time.Second)
		mctest.ExpectNone(t, ctx, k8sClient, "99-worker-generated-registries")
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
		worker := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-registries", func(*mcfgv1.MachineConfig) bool { return true })
		if got := mctest.Files(t, worker); got[registries.RegistriesConfPath] != docsRegistriesConf || len(got) != 1 {
			t.Errorf("worker files %v, want OpenShift's registries.conf only:\n%s", got, docsRegistriesConf)
		}
		master := mctest.Wait(t, ctx, k8sClient, "99-master-generated-registries", func(*mcfgv1.MachineConfig) bool { return true })
		conf := mctest.Files(t, master)[registries.RegistriesConfPath]
		if !strings.HasPrefix(conf, `unqualified-search-registries = ["docker.io"]`) || !strings.Contains(conf, `location = "example.io/digest-example/ubi-minimal"`) {
			t.Errorf("master's registries.conf is not the mirror over the built-in default:\n%s", conf)
		}
		for _, mc := range []*mcfgv1.MachineConfig{worker, master} {
			if len(mc.OwnerReferences) != 0 || mc.Annotations["machineconfiguration.openshift.io/generated-by-controller-version"] != testVersion {
				t.Errorf("%s metadata %+v", mc.Name, mc.ObjectMeta)
			}
		}
		// A custom pool inherits worker's through its selector, as on OpenShift.
		mctest.ExpectNone(t, ctx, k8sClient, "99-infra-generated-registries")
	})

	t.Run("blocked registries in image.config reach policy.json", func(t *testing.T) {
		img := &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"},
			Spec: apicfgv1.ImageSpec{RegistrySources: apicfgv1.RegistrySources{BlockedRegistries: []string{"blocked.example.com", "docker.io"}}}}
		must(t, k8sClient.Create(ctx, img))
		mc := mctest.Wait(t, ctx, k8sClient, "99-worker-generated-registries", func(mc *mcfgv1.MachineConfig) bool { return len(mctest.Files(t, mc)) == 2 })
		policy := mctest.Files(t, mc)[registries.PolicyJSONPath]
		var p struct {
			Default    []map[string]string                       `json:"default"`
			Transports map[string]map[string][]map[string]string `json:"transports"`
		}
		must(t, json.Unmarshal([]byte(policy), &p))
		if p.Default[0]["type"] != "insecureAcceptAnything" || p.Transports["docker"]["docker.io"][0]["type"] != "reject" ||
			p.Transports["atomic"]["blocked.example.com"][0]["type"] != "reject" || p.Transports["docker-daemon"][""][0]["type"] != "insecureAcceptAnything" {
			t.Errorf("policy.json:\n%s", policy)
		}
		if !strings.Contains(mctest.Files(t, mc)[registries.RegistriesConfPath], "location = \"docker.io\"\n  blocked = true") {
			t.Errorf("registries.conf does not block docker.io:\n%s", mctest.Files(t, mc)[registries.RegistriesConfPath])
		}
		if len(mc.OwnerReferences) != 1 || mc.OwnerReferences[0].Kind != "Image" || mc.OwnerReferences[0].UID != img.UID {
			t.Errorf("owners %+v", mc.OwnerReferences)
		}
	})

	t.Run("a refused input changes nothing and is reported on the object", func(t *testing.T) {
		before := mctest.Get(t, ctx, k8sClient, "99-worker-generated-registries")
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
		if after := mctest.Get(t, ctx, k8sClient, before.Name); after.ResourceVersion != before.ResourceVersion {
			t.Errorf("MachineConfig changed after a refused input")
		}
		must(t, k8sClient.Delete(ctx, itms))
	})

	t.Run("a MachineConfig deleted by hand is put back", func(t *testing.T) {
		mc := mctest.Get(t, ctx, k8sClient, "99-master-generated-registries")
		must(t, k8sClient.Delete(ctx, mc))
		mctest.Wait(t, ctx, k8sClient, mc.Name, func(n *mcfgv1.MachineConfig) bool { return n.UID != mc.UID })
	})

	t.Run("with the image config gone and no mirror set the MachineConfigs go", func(t *testing.T) {
		must(t, k8sClient.Delete(ctx, &apicfgv1.Image{ObjectMeta: metav1.ObjectMeta{Name: "cluster"}}))
		// Only the mirror set is left: registries.conf without the blocks, no policy.json.
		mctest.Wait(t, ctx, k8sClient, "99-worker-generated-registries", func(mc *mcfgv1.MachineConfig) bool {
			files := mctest.Files(t, mc)
			return len(files) == 1 && files[registries.RegistriesConfPath] == docsRegistriesConf
		})
		must(t, k8sClient.Delete(ctx, &apicfgv1.ImageDigestMirrorSet{ObjectMeta: metav1.ObjectMeta{Name: "digest-mirror"}}))
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-worker-generated-registries"))
		mctest.WaitGone(t, ctx, k8sClient, mctest.GoneMC("99-master-generated-registries"))
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
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
