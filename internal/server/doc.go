// Package server is the Machine Config Server: it hands each new machine its pool's rendered
// MachineConfig as Ignition, in the spec version the machine's Ignition client asks for.
//
// The work is split so the hot path is a map lookup and a write:
//   - NegotiateVersion (pure) picks the spec version from the Accept header;
//   - BuildServedConfig (pure) turns a rendered MachineConfig and its extras into response bytes,
//     BuildTemplatedServedConfig the same with seed 003's etcd_index templating (internal/etcdindex);
//   - Store keeps, per pool, what to serve and lazily builds and caches the bytes per spec version;
//   - sources (cluster, bootstrap, from-dir) watch their inputs and replace the Store's contents
//     when something changes, which invalidates only the pools whose inputs changed;
//   - Handler does routing, auth, negotiation, ETags, audit logging and metrics.
package server
