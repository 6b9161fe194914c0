package hostile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coreos/stream-metadata-go/stream"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
	operatorv1 "github.com/openshift/api/operator/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/mco-dev/mco/internal/bootimage"
	"github.com/mco-dev/mco/internal/protocol"
	"github.com/mco-dev/mco/internal/testenv"
)

const (
	awsSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"AWSMachineProviderConfig","ami":{"id":"ami-0123456789abcdef0"},` +
		`"instanceType":"m6i.xlarge","placement":{"availabilityZone":"us-east-1a","region":"us-east-1"},"userDataSecret":{"name":"worker-user-data"}}`
	gcpDisks = `[{"autoDelete":true,"boot":true,"image":"projects/rhcos-cloud/global/images/rhcos-413-92-202305021736-0-gcp-x86-64","sizeGb":128}]`
	gcpSpec  = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"GCPMachineProviderSpec","machineType":"n2-standard-4",` +
		`"disks":` + gcpDisks + `,"region":"us-central1","zone":"us-central1-a","userDataSecret":{"name":"worker-user-data"}}`
	azureSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"AzureMachineProviderSpec","vmSize":"Standard_D4s_v3",` +
		`"image":{"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413","version":"413.92.20230502","type":"MarketplaceNoPlan"},` +
		`"location":"eastus","userDataSecret":{"name":"worker-user-data"}}`
	vsphereSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"VSphereMachineProviderSpec","template":"rhcos-413","workspace":{"server":"vc.example.com"}}`
	// oldAMI is awsSpec's AMI: the stream has a newer one for us-east-1, so a well-formed
	// MachineSet booting it is patched.
	oldAMI = "ami-0123456789abcdef0"
)

// edit replaces old by new in a fixture spec, which must contain old.
func edit(spec, old, new string) string {
	if !strings.Contains(spec, old) {
		panic("fixture does not contain " + old)
	}
	return strings.Replace(spec, old, new, 1)
}

// providerSpecCase is a malformed providerSpec.value; field is its path under
// spec.template.spec.providerSpec.value ("" for the value itself).
type providerSpecCase struct {
	name, spec, field, reason string
	// stored: the API server accepts it, so it also goes through the controller.
	stored bool
}

func bootImageCases() []hostileCase {
	const ps = bootimage.ProviderSpecField
	rows := []providerSpecCase{
		{"aws ami a string", edit(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `"ami-0123456789abcdef0"`), ".ami", "got a string, want an object", true},
		{"aws ami id a number", edit(awsSpec, `"ami-0123456789abcdef0"`, `12345`), ".ami.id", "got a number, want a string", true},
		{"aws ami missing", edit(awsSpec, `"ami":{"id":"ami-0123456789abcdef0"},`, ``), ".ami", "missing", true},
		{"aws ami with no id, arn or filters", edit(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `{}`), ".ami", "has no id, arn or filters", true},
		{"aws placement a list", edit(awsSpec, `{"availabilityZone":"us-east-1a","region":"us-east-1"}`, `["us-east-1"]`), ".placement", "got a list, want an object", true},
		{"aws region a boolean", edit(awsSpec, `"region":"us-east-1"`, `"region":true`), ".placement.region", "got a boolean, want a string", true},
		{"aws userDataSecret a string", edit(awsSpec, `{"name":"worker-user-data"}`, `"worker-user-data"`), ".userDataSecret", "got a string, want an object", true},
		{"gcp disks an object", edit(gcpSpec, gcpDisks, `{"boot":true}`), ".disks", "got an object, want a list", true},
		{"gcp disks missing", edit(gcpSpec, `"disks":`+gcpDisks+`,`, ``), ".disks", "missing", true},
		{"gcp disk a string", edit(gcpSpec, gcpDisks, `["boot"]`), ".disks.0", "got a string, want an object", true},
		{"gcp boot a string", edit(gcpSpec, `"boot":true`, `"boot":"yes"`), ".disks.0.boot", "got a string, want a boolean", true},
		{"gcp image a number", edit(gcpSpec, `"projects/rhcos-cloud/global/images/rhcos-413-92-202305021736-0-gcp-x86-64"`, `413`), ".disks.0.image", "got a number, want a string", true},
		{"azure image a string", edit(azureSpec, `{"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413","version":"413.92.20230502","type":"MarketplaceNoPlan"}`, `"aro4"`), ".image", "got a string, want an object", true},
		{"azure image missing", edit(azureSpec, `"image":{"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413","version":"413.92.20230502","type":"MarketplaceNoPlan"},`, ``), ".image", "missing", true},
		{"azure publisher a number", edit(azureSpec, `"publisher":"azureopenshift"`, `"publisher":7`), ".image.publisher", "got a number, want a string", true},
		{"azure securityProfile a string", edit(azureSpec, `"location":"eastus"`, `"location":"eastus","securityProfile":"TrustedLaunch"`), ".securityProfile", "got a string, want an object", true},
		{"vsphere template a number", edit(vsphereSpec, `"rhcos-413"`, `413`), ".template", "got a number, want a string", true},
		{"vsphere not JSON", `{"kind":"VSphereMachineProviderSpec","template":rhcos}`, "", "not JSON: invalid character", false},
		{"kind missing", edit(awsSpec, `"kind":"AWSMachineProviderConfig",`, ``), ".kind", "missing", true},
		{"kind a number", edit(awsSpec, `"AWSMachineProviderConfig"`, `1`), ".kind", "got a number, want a string", true},
		{"data after the JSON", awsSpec + ` {"ami":{"id":"ami-evil"}}`, "", "not JSON: data after the object", false},
		{"a list, not an object", `[` + awsSpec + `]`, "", "got a list, want an object", false},
	}
	var cases []hostileCase
	for _, r := range rows {
		field := ps + r.field
		msName := "hostile-" + slug(r.name)
		c := hostileCase{entry: "bootimage.Decide (providerSpec)", name: r.name, want: []string{field + ": ", r.reason}}
		if r.stored {
			c.entry, c.integration = "boot image controller (MachineSet)", true
			c.want = append(c.want, msName+": ")
		}
		c.run = func(t *testing.T) error {
			ms := machineSet(msName, r.spec)
			d, err := bootimage.Decide(ms, loadStream(t), bootimage.Settings{DefaultArchitecture: "amd64"})
			var skip *bootimage.Skip
			if errors.As(err, &skip) || d.Skip != nil {
				t.Fatalf("skipped as if well-formed: %v %v", err, d.Skip)
			}
			if d.ProviderSpec != nil {
				t.Errorf("a patch was produced: %s", d.ProviderSpec)
			}
			if !r.stored || err == nil {
				return err
			}
			for _, w := range []string{field, r.reason} {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Decide's error lacks %q: %v", w, err)
				}
			}
			return controllerDegrades(t, ms)
		}
		cases = append(cases, c)
	}
	return append(cases, streamCases()...)
}

func machineSet(name, spec string) *machinev1beta1.MachineSet {
	sel := map[string]string{"machine.openshift.io/cluster-api-machineset": name}
	return &machinev1beta1.MachineSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: bootImageOpts.MachineAPINamespace, Name: name},
		Spec: machinev1beta1.MachineSetSpec{
			Selector: metav1.LabelSelector{MatchLabels: sel},
			Template: machinev1beta1.MachineTemplateSpec{
				ObjectMeta: machinev1beta1.ObjectMeta{Labels: sel},
				Spec:       machinev1beta1.MachineSpec{ProviderSpec: machinev1beta1.ProviderSpec{Value: &runtime.RawExtension{Raw: []byte(spec)}}},
			},
		},
	}
}

func loadStream(t *testing.T) *stream.Stream {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "internal", "bootimage", "testdata", "stream-4.16.json"))
	must(t, err)
	st, err := bootimage.ParseStream(string(data))
	must(t, err)
	return st
}

// controllerDegrades creates ms and waits for the boot image controller to report it in
// BootImageUpdateDegraded; the MachineSet must not have been written to meanwhile. It returns
// what the condition says about ms.
func controllerDegrades(t *testing.T, ms *machinev1beta1.MachineSet) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	create(t, ctx, ms)
	created := ms.ResourceVersion
	msg := waitDegraded(t, ctx, ms.Name+": ")
	var now machinev1beta1.MachineSet
	must(t, k8s.Get(ctx, client.ObjectKeyFromObject(ms), &now))
	if now.ResourceVersion != created {
		t.Errorf("the MachineSet was written to: %s", now.Spec.Template.Spec.ProviderSpec.Value.Raw)
	}
	for _, item := range strings.Split(msg, "; ") {
		if i := strings.Index(item, ms.Name+": "); i >= 0 {
			return errors.New(item[i:])
		}
	}
	return errors.New(msg)
}

// waitDegraded waits until BootImageUpdateDegraded is True with a message containing what.
func waitDegraded(t *testing.T, ctx context.Context, what string) string {
	t.Helper()
	var last string
	for ctx.Err() == nil {
		var mc operatorv1.MachineConfiguration
		if err := k8s.Get(ctx, client.ObjectKey{Name: protocol.ClusterMachineConfiguration}, &mc); err == nil {
			if c := meta.FindStatusCondition(mc.Status.Conditions, bootimage.ConditionDegraded); c != nil {
				last = c.Message
				if c.Status == metav1.ConditionTrue && strings.Contains(c.Message, what) {
					return c.Message
				}
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s to mention %q; last message: %q", bootimage.ConditionDegraded, what, last)
	return ""
}

// streamCases break the golden stream in ConfigMap coreos-bootimages: the controller reports
// the ConfigMap, the key and what is wrong, and patches no MachineSet, not even one booting
// an old AMI that a good stream would update.
func streamCases() []hostileCase {
	rows := []struct{ name, data, reason string }{
		{"not JSON", `{"stream":"rhcos-4.16","architectures":`, "stream metadata is not valid JSON: unexpected end of JSON input"},
		{"empty", "  \n", "stream metadata is empty"},
		{"no architectures", `{"stream":"rhcos-4.16","architectures":{}}`, "architectures: missing or empty"},
		{"architectures a list", `{"stream":"rhcos-4.16","architectures":["x86_64"]}`, "architectures: got a JSON array, want an object"},
		{"an AMI of the wrong type", `{"stream":"rhcos-4.16","architectures":{"x86_64":{"images":{"aws":{"regions":{"us-east-1":{"release":"416","image":416}}}}}}}`,
			"architectures.x86_64.images.aws.regions.image: got a JSON number, want a string"},
		{"data after the JSON", `{"stream":"rhcos-4.16","architectures":{"x86_64":{}}} {"x":1}`, "stream metadata is not valid JSON: invalid character '{' after top-level value"},
	}
	key := bootImageOpts.BootImagesNamespace + "/" + bootimage.BootImagesConfigMap
	var cases []hostileCase
	for _, r := range rows {
		cases = append(cases, hostileCase{
			entry: "boot image controller (ConfigMap coreos-bootimages)", name: r.name, integration: true,
			want: []string{"ConfigMap " + key, "key " + bootimage.StreamKey, r.reason},
			run: func(t *testing.T) error {
				if _, err := bootimage.ParseStream(r.data); err == nil || !strings.Contains(err.Error(), r.reason) {
					t.Errorf("ParseStream: %v, want an error containing %q", err, r.reason)
				}
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				setStream(t, ctx, r.data)
				t.Cleanup(func() { setStream(t, context.Background(), goodStream) })
				// The stream is read only while some MachineSet is enrolled: the canary, created
				// once the controller's cache holds the broken stream.
				waitCachedStream(t, ctx, r.data)
				canary := machineSet("hostile-canary-"+slug(r.name), awsSpec)
				create(t, ctx, canary)
				created := canary.ResourceVersion
				msg := waitDegraded(t, ctx, r.reason)
				time.Sleep(500 * time.Millisecond)
				var now machinev1beta1.MachineSet
				must(t, k8s.Get(ctx, client.ObjectKeyFromObject(canary), &now))
				if now.ResourceVersion != created {
					t.Errorf("MachineSet %s was patched from a broken stream: %s", canary.Name, now.Spec.Template.Spec.ProviderSpec.Value.Raw)
				}
				return errors.New(msg)
			},
		})
	}
	return cases
}

func waitCachedStream(t *testing.T, ctx context.Context, data string) {
	t.Helper()
	for ctx.Err() == nil {
		cm := &corev1.ConfigMap{}
		if err := cached.Get(ctx, client.ObjectKey{Namespace: bootImageOpts.BootImagesNamespace, Name: bootimage.BootImagesConfigMap}, cm); err == nil && cm.Data[bootimage.StreamKey] == data {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("the controller's cache never saw the broken stream")
}

func setStream(t *testing.T, ctx context.Context, data string) {
	t.Helper()
	cm := &corev1.ConfigMap{}
	must(t, k8s.Get(ctx, client.ObjectKey{Namespace: bootImageOpts.BootImagesNamespace, Name: bootimage.BootImagesConfigMap}, cm))
	cm.Data[bootimage.StreamKey] = data
	must(t, k8s.Update(ctx, cm))
}
