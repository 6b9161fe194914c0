// Package render is the render controller: for every MachineConfigPool it merges the selected
// MachineConfigs (internal/render does the work), writes the content-addressed rendered
// MachineConfig, points the pool's spec.configuration at it, reports RenderDegraded, and deletes
// old rendered configs nothing refers to any more.
//
// Bursts of MachineConfig changes coalesce in the work queue: a pool key is queued once however
// many events arrive while it waits, so no fixed delay is needed.
package render
