// Package bootimage is the boot image controller: it keeps the boot image of every enrolled
// Machine API MachineSet equal to the one the ConfigMap coreos-bootimages publishes for the
// running release, so a scale-up boots a current OS instead of the image the cluster was
// installed with. It reads MachineConfiguration `cluster` (which MachineSets are enrolled), the
// ConfigMap and the MachineSets; it calls internal/bootimage for every decision; it writes
// MachineSet providerSpecs (JSON merge patches), upgrades spec 2 pointer Ignition stubs in
// place, and reports the conditions BootImageUpdateProgressing and BootImageUpdateDegraded on
// MachineConfiguration `cluster`.
//
// Every event enqueues the one key "cluster" and a reconcile walks all MachineSets: the
// hot-loop guard and the status counts are about the whole set, and one worker never races
// itself.
package bootimage
