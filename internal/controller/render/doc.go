// Package render is the render controller: for every MachineConfigPool it merges the selected
// MachineConfigs (internal/render does the work), writes the content-addressed rendered
// MachineConfig, points the pool's spec.configuration at it, reports RenderDegraded, and deletes
// old rendered configs nothing refers to any more.
//
// A burst of changes to a pool's inputs (`kubectl apply -f dir/`) gives one rendered config:
// the pool is rendered once its inputs have been quiet for a short window, and at the latest a
// bound after the burst's first change (settle.go), instead of OpenShift's fixed 5 s delay.
package render
