// Package render is the pure core of rendering: from a pool and its MachineConfigs to one
// merged, validated, content-addressed MachineConfig. No I/O; the render controller, the CLI
// and the server's from-dir mode all call Render.
//
// The rules follow OpenShift's MCO so existing MachineConfigs render the same way: order
// (role=worker first, then the rest, each by name), Ignition child-overrides-parent merge,
// overwrite=true on files, and the non-Ignition fields (kernelArguments concatenated, fips OR,
// last non-default kernelType, OS images from the last user MachineConfig or the pool default).
package render
