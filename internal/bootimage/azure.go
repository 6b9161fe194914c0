package bootimage

import (
	"strings"

	"github.com/coreos/stream-metadata-go/stream"
	"github.com/coreos/stream-metadata-go/stream/rhcos"
	machinev1beta1 "github.com/openshift/api/machine/v1beta1"
)

// azureOffer is one marketplace product RHCOS is published as.
type azureOffer struct {
	paid bool
	// pick chooses the product's images in the stream.
	pick func(*rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages
	name string
}

var (
	azureUnpaid     = azureOffer{name: "no-purchase-plan", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.NoPurchasePlan }}
	azurePaidOffers = map[bool]map[string]azureOffer{ // emea → offer → product
		false: {
			"rh-ocp-worker": {paid: true, name: "ocp", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OCP }},
			"rh-opp-worker": {paid: true, name: "opp", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OPP }},
			"rh-oke-worker": {paid: true, name: "oke", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OKE }},
		},
		true: {
			"rh-ocp-worker": {paid: true, name: "ocp-emea", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OCPEMEA }},
			"rh-opp-worker": {paid: true, name: "opp-emea", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OPPEMEA }},
			"rh-oke-worker": {paid: true, name: "oke-emea", pick: func(m *rhcos.AzureMarketplace) *rhcos.AzureMarketplaceImages { return m.OKEEMEA }},
		},
	}
)

// Marketplace publishers of RHCOS: the unpaid image, and the paid products (redhat-limited
// sells them in EMEA).
const (
	azureUnpaidPublisher   = "azureopenshift"
	azurePaidPublisher     = "redhat"
	azurePaidEMEAPublisher = "redhat-limited"
)

// updateAzure moves a marketplace image to the same product's image in the stream, keeping its
// Hyper-V generation. Uploaded images (resourceID) and images of other publishers are custom;
// confidential and trusted-launch VMs need images made for their security type, which the
// stream does not list.
func updateAzure(spec doc, images stream.Arch, arch string) error {
	if arch == "s390x" || arch == "ppc64le" {
		return skipf(SkipArchitecture, "Azure has no %s machines", arch)
	}
	st, err := spec.strAt("securityProfile", "settings", "securityType")
	if err != nil {
		return err
	}
	if st != "" {
		return skipf(SkipCustomImage, "VMs with security type %s need images made for it; the stream lists none", st)
	}
	image, ok, err := spec.object("image")
	if err != nil {
		return err
	}
	if !ok {
		return spec.missing("image", "an Azure machine boots the image given there")
	}
	var fields [4]string
	for i, key := range []string{"resourceID", "publisher", "offer", "sku"} {
		if fields[i], err = image.str(key); err != nil {
			return err
		}
	}
	id, publisher, offerName, sku := fields[0], fields[1], fields[2], fields[3]
	if id != "" {
		return skipf(SkipCustomImage, "the image is an uploaded image (%s), not a marketplace one", id)
	}
	offer, ok := azureOfferOf(publisher, offerName)
	if !ok {
		return skipf(SkipCustomImage, "marketplace image %s/%s is not an RHCOS image", publisher, offerName)
	}
	gen2 := azureIsGen2(offer, sku) || arch == "aarch64"
	var market *rhcos.AzureMarketplace
	if ext := images.RHELCoreOSExtensions; ext != nil && ext.Marketplace != nil {
		market = ext.Marketplace.Azure
	}
	var candidates *rhcos.AzureMarketplaceImages
	if market != nil {
		candidates = offer.pick(market)
	}
	want := pickGeneration(candidates, gen2)
	if want == nil {
		return skipf(SkipNoStreamImage, "the stream has no %s %s image (Hyper-V gen%d)", arch, offer.name, map[bool]int{false: 1, true: 2}[gen2])
	}
	// Blank fields would leave the MachineSet pointing at no image at all.
	if want.Publisher == "" || want.Offer == "" || want.SKU == "" || want.Version == "" {
		return skipf(SkipNoStreamImage, "the stream's %s %s image (Hyper-V gen%d) lacks its publisher, offer, sku or version", arch, offer.name, map[bool]int{false: 1, true: 2}[gen2])
	}
	// The next update reads the image this one writes: one it would not take for the same
	// product and generation would be skipped as custom from then on, or flip generations on
	// every update.
	if o, ok := azureOfferOf(want.Publisher, want.Offer); !ok || o.name != offer.name || (azureIsGen2(o, want.SKU) || arch == "aarch64") != gen2 {
		return skipf(SkipNoStreamImage, "the stream's %s %s image %s/%s/%s is not an image of that product and Hyper-V generation (gen%d)", arch, offer.name, want.Publisher, want.Offer, want.SKU, map[bool]int{false: 1, true: 2}[gen2])
	}
	m := image.m
	m["publisher"], m["offer"], m["sku"], m["version"] = want.Publisher, want.Offer, want.SKU, want.Version
	m["type"] = string(machinev1beta1.AzureImageTypeMarketplaceNoPlan)
	if offer.paid {
		m["type"] = string(machinev1beta1.AzureImageTypeMarketplaceWithPlan)
	}
	return nil
}

func azureOfferOf(publisher, offer string) (azureOffer, bool) {
	switch publisher {
	case azureUnpaidPublisher:
		return azureUnpaid, true
	case azurePaidPublisher, azurePaidEMEAPublisher:
		o, ok := azurePaidOffers[publisher == azurePaidEMEAPublisher][offer]
		return o, ok
	}
	return azureOffer{}, false
}

// azureIsGen2: unpaid gen2 SKUs carry "v2" (416-v2), paid gen1 SKUs carry "gen1"
// (rh-ocp-worker-gen1).
func azureIsGen2(offer azureOffer, sku string) bool {
	if offer.paid {
		return !strings.Contains(sku, "gen1")
	}
	return strings.Contains(sku, "v2")
}

func pickGeneration(imgs *rhcos.AzureMarketplaceImages, gen2 bool) *rhcos.AzureMarketplaceImage {
	switch {
	case imgs == nil:
		return nil
	case gen2:
		return imgs.Gen2
	default:
		return imgs.Gen1
	}
}
