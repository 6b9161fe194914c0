// Package adoption is what adopting a node mco did not boot would do to it, as the agent
// publishes it on the Node (protocol.AdoptionPlanAnnotation) and `mco plan`, `mco explain` and
// `mco status` show it: pure values, built by the agent from what it found on the host.
package adoption
