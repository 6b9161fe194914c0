package bootimage

import (
	"errors"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/coreos/stream-metadata-go/stream"
)

func loadStream(t *testing.T) *stream.Stream {
	t.Helper()
	data, err := os.ReadFile("testdata/stream-4.16.json")
	if err != nil {
		t.Fatal(err)
	}
	st, err := ParseStream(string(data))
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// setPath sets a dotted path ("disks.0.image") in a decoded document.
func setPath(t *testing.T, doc map[string]any, path string, value any) {
	t.Helper()
	keys := strings.Split(path, ".")
	var cur any = doc
	for i, k := range keys {
		last := i == len(keys)-1
		switch c := cur.(type) {
		case map[string]any:
			if last {
				c[k] = value
				return
			}
			cur = c[k]
		case []any:
			n, err := strconv.Atoi(k)
			if err != nil || n >= len(c) {
				t.Fatalf("path %s: bad index %s", path, k)
			}
			if last {
				c[n] = value
				return
			}
			cur = c[n]
		default:
			t.Fatalf("path %s: %s is not a container", path, k)
		}
	}
}

const (
	awsSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"AWSMachineProviderConfig",
		"ami":{"id":"ami-0123456789abcdef0"},"instanceType":"m6i.xlarge",
		"blockDevices":[{"ebs":{"encrypted":true,"iops":0,"volumeSize":120,"volumeType":"gp3"}}],
		"placement":{"availabilityZone":"us-east-1a","region":"us-east-1"},
		"userDataSecret":{"name":"worker-user-data"},"credentialsSecret":{"name":"aws-cloud-credentials"}}`
	gcpSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"GCPMachineProviderSpec","machineType":"n2-standard-4",
		"disks":[{"autoDelete":true,"boot":true,"image":"projects/rhcos-cloud/global/images/rhcos-413-92-202305021736-0-gcp-x86-64","sizeGb":128,"type":"pd-ssd"},
		         {"autoDelete":true,"boot":false,"image":"projects/my-project/global/images/data","sizeGb":500,"type":"pd-standard"}],
		"region":"us-central1","zone":"us-central1-a","projectID":"my-project","userDataSecret":{"name":"worker-user-data"}}`
	azureSpec = `{"apiVersion":"machine.openshift.io/v1beta1","kind":"AzureMachineProviderSpec","vmSize":"Standard_D4s_v3",
		"image":{"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413","version":"413.92.20230502","type":"MarketplaceNoPlan"},
		"osDisk":{"diskSizeGB":128,"osType":"Linux","managedDisk":{"storageAccountType":"Premium_LRS"}},
		"location":"eastus","userDataSecret":{"name":"worker-user-data"}}`
)

// with replaces old by new in a spec template, for variants of the base specs.
func with(spec, old, new string) string {
	if !strings.Contains(spec, old) {
		panic("fixture does not contain " + old)
	}
	return strings.Replace(spec, old, new, 1)
}

func TestUpdateProviderSpec(t *testing.T) {
	st := loadStream(t)
	const newGCP = "projects/rhcos-cloud/global/images/rhcos-416-94-202406251923-0-gcp-x86-64"
	for _, tc := range []struct {
		name, spec, arch string
		edits            map[string]any // paths the new spec changes; nil means unchanged
		skip             SkipReason
	}{
		{name: "aws us-east-1", spec: awsSpec, arch: "x86_64", edits: map[string]any{"ami.id": "ami-0f71dcd99e6a1cd53"}},
		{name: "aws eu-west-1", spec: with(awsSpec, `"region":"us-east-1"`, `"region":"eu-west-1"`), arch: "x86_64", edits: map[string]any{"ami.id": "ami-0b2c4d6e8f0a1c3e5"}},
		{name: "aws aarch64", spec: awsSpec, arch: "aarch64", edits: map[string]any{"ami.id": "ami-0a3bc62c0a6d0e4d1"}},
		{name: "aws already current", spec: with(awsSpec, "ami-0123456789abcdef0", "ami-0f71dcd99e6a1cd53"), arch: "x86_64"},
		{name: "aws region not in stream", spec: with(awsSpec, `"region":"us-east-1"`, `"region":"ap-northeast-3"`), arch: "x86_64", skip: SkipNoStreamImage},
		{name: "aws aarch64 region not in stream", spec: with(awsSpec, `"region":"us-east-1"`, `"region":"us-west-2"`), arch: "aarch64", skip: SkipNoStreamImage},
		{name: "aws no region", spec: with(awsSpec, `"region":"us-east-1"`, `"tenancy":"default"`), arch: "x86_64", skip: SkipNoStreamImage},
		{name: "aws s390x has no AMIs", spec: awsSpec, arch: "s390x", skip: SkipNoStreamImage},
		{name: "aws ami by arn", spec: with(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `{"arn":"arn:aws:ec2:us-east-1::image/ami-1"}`), arch: "x86_64", skip: SkipCustomImage},
		{name: "aws ami by filters", spec: with(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `{"filters":[{"name":"tag:Name","values":["my-golden-image"]}]}`), arch: "x86_64", skip: SkipCustomImage},

		{name: "gcp", spec: gcpSpec, arch: "x86_64", edits: map[string]any{"disks.0.image": newGCP}},
		{name: "gcp image as URL", spec: with(gcpSpec, "projects/rhcos-cloud/global/images/rhcos-413", "https://www.googleapis.com/compute/v1/projects/rhcos-cloud/global/images/rhcos-413"), arch: "x86_64", edits: map[string]any{"disks.0.image": newGCP}},
		{name: "gcp aarch64", spec: gcpSpec, arch: "aarch64", edits: map[string]any{"disks.0.image": "projects/rhcos-cloud/global/images/rhcos-416-94-202406251923-0-gcp-aarch64"}},
		{name: "gcp already current", spec: with(gcpSpec, "rhcos-413-92-202305021736-0-gcp-x86-64", "rhcos-416-94-202406251923-0-gcp-x86-64"), arch: "x86_64"},
		{name: "gcp image of another project", spec: with(gcpSpec, "projects/rhcos-cloud/global/images/rhcos-413", "projects/my-project/global/images/rhcos-413"), arch: "x86_64", skip: SkipCustomImage},
		{name: "gcp installer-uploaded image by bare name", spec: with(gcpSpec, "projects/rhcos-cloud/global/images/rhcos-413-92-202305021736-0-gcp-x86-64", "mycluster-x7k2p-rhcos-image"), arch: "x86_64", skip: SkipCustomImage},
		{name: "gcp no boot disk", spec: with(gcpSpec, `"boot":true`, `"boot":false`), arch: "x86_64", skip: SkipCustomImage},
		{name: "gcp ppc64le has no images", spec: gcpSpec, arch: "ppc64le", skip: SkipNoStreamImage},

		{name: "azure unpaid gen1", spec: azureSpec, arch: "x86_64", edits: map[string]any{"image.sku": "aro_416", "image.version": "416.94.20240625"}},
		{name: "azure unpaid gen2", spec: with(azureSpec, `"sku":"aro_413"`, `"sku":"413-v2"`), arch: "x86_64", edits: map[string]any{"image.sku": "416-v2", "image.version": "416.94.20240625"}},
		{name: "azure unpaid aarch64 is gen2", spec: azureSpec, arch: "aarch64", edits: map[string]any{"image.sku": "416-arm", "image.version": "416.94.20240625"}},
		{name: "azure paid ocp gen2", spec: with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413","version":"413.92.20230502","type":"MarketplaceNoPlan"`,
			`"offer":"rh-ocp-worker","publisher":"redhat","resourceID":"","sku":"rh-ocp-worker","version":"413.92.2023050200","type":"MarketplaceWithPlan"`),
			arch: "x86_64", edits: map[string]any{"image.version": "416.94.20240625"}},
		{name: "azure paid oke gen1", spec: with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413"`, `"offer":"rh-oke-worker","publisher":"redhat","resourceID":"","sku":"rh-oke-worker-gen1"`),
			arch: "x86_64", edits: map[string]any{"image.version": "416.94.20240625", "image.type": "MarketplaceWithPlan"}},
		{name: "azure paid opp emea", spec: with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413"`, `"offer":"rh-opp-worker","publisher":"redhat-limited","resourceID":"","sku":"rh-opp-worker"`),
			arch: "x86_64", edits: map[string]any{"image.version": "416.94.20240625", "image.type": "MarketplaceWithPlan"}},
		{name: "azure without type gets it", spec: with(azureSpec, `,"type":"MarketplaceNoPlan"`, ``), arch: "x86_64",
			edits: map[string]any{"image.sku": "aro_416", "image.version": "416.94.20240625", "image.type": "MarketplaceNoPlan"}},
		{name: "azure already current", spec: with(azureSpec, `"sku":"aro_413","version":"413.92.20230502"`, `"sku":"aro_416","version":"416.94.20240625"`), arch: "x86_64"},
		{name: "azure paid aarch64 product missing from stream", spec: with(azureSpec, `"offer":"aro4","publisher":"azureopenshift","resourceID":"","sku":"aro_413"`, `"offer":"rh-opp-worker","publisher":"redhat","resourceID":"","sku":"rh-opp-worker"`),
			arch: "aarch64", skip: SkipNoStreamImage},
		{name: "azure uploaded image", spec: with(azureSpec, `"resourceID":""`, `"resourceID":"/resourceGroups/rg/providers/Microsoft.Compute/galleries/g/images/rhcos-gen2/versions/latest"`), arch: "x86_64", skip: SkipCustomImage},
		{name: "azure other publisher", spec: with(azureSpec, `"publisher":"azureopenshift"`, `"publisher":"canonical"`), arch: "x86_64", skip: SkipCustomImage},
		{name: "azure unknown paid offer", spec: with(azureSpec, `"offer":"aro4","publisher":"azureopenshift"`, `"offer":"rhel-byos","publisher":"redhat"`), arch: "x86_64", skip: SkipCustomImage},
		{name: "azure confidential VM", spec: with(azureSpec, `"location":"eastus"`, `"location":"eastus","securityProfile":{"settings":{"securityType":"ConfidentialVM"}}`), arch: "x86_64", skip: SkipCustomImage},
		{name: "azure s390x", spec: azureSpec, arch: "s390x", skip: SkipArchitecture},

		{name: "vsphere", spec: `{"kind":"VSphereMachineProviderSpec","template":"rhcos-413","workspace":{"server":"vc.example.com"}}`, arch: "x86_64", skip: SkipPlatform},
		{name: "baremetal", spec: `{"kind":"BareMetalMachineProviderSpec","image":{"url":"http://x"}}`, arch: "x86_64", skip: SkipPlatform},
		{name: "arch missing from stream", spec: awsSpec, arch: "riscv64", skip: SkipArchitecture},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, changed, err := UpdateProviderSpec([]byte(tc.spec), st, tc.arch)
			var skip *Skip
			if tc.skip != "" {
				if !errors.As(err, &skip) || skip.Reason != tc.skip {
					t.Fatalf("want skip %s, got changed=%v err=%v out=%s", tc.skip, changed, err, out)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != (tc.edits != nil) {
				t.Fatalf("changed=%v, want %v: %s", changed, tc.edits != nil, out)
			}
			want, _ := decodeObject([]byte(tc.spec))
			for path, v := range tc.edits {
				setPath(t, want, path, v)
			}
			got, err := decodeObject(out)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("new providerSpec\n got %s\nwant edits %v only", out, tc.edits)
			}
		})
	}
}

func TestUpdateProviderSpecRejectsMalformed(t *testing.T) {
	st := loadStream(t)
	for _, raw := range []string{`not json`, `[1,2]`, `null`, awsSpec + ` trailing`, `{"ami":{"id":"ami-1"}}`,
		with(awsSpec, `{"id":"ami-0123456789abcdef0"}`, `"ami-0123456789abcdef0"`), with(gcpSpec, `"boot":true`, `"boot":"yes"`)} {
		_, _, err := UpdateProviderSpec([]byte(raw), st, "x86_64")
		var skip *Skip
		if err == nil || errors.As(err, &skip) {
			t.Errorf("%s: want a plain error, got %v", raw, err)
		}
	}
}

func TestParseStream(t *testing.T) {
	for _, bad := range []string{"", "  ", "{", `{"stream":"rhcos-4.16","architectures":{}}`} {
		if _, err := ParseStream(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	st := loadStream(t)
	if st.Stream != "rhcos-4.16" || st.Architectures["x86_64"].RHELCoreOSExtensions.Marketplace.Azure.OCP.Gen2.SKU != "rh-ocp-worker" {
		t.Errorf("fixture parsed wrong: %+v", st.Stream)
	}
}
