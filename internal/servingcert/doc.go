// Package servingcert decides the Machine Config Server's serving certificate and its CA when
// mco manages them (no certificate supplied by the admin): a pure core over the three stored
// objects, the wanted names, the time and a Policy. It says what to write and when to look
// again; internal/controller/servingcert reads the objects, calls Decide and writes.
//
// Rules (Policy defaults in brackets):
//   - The serving certificate (ECDSA P-256, [1 year]) is issued again when it is missing or
//     unreadable, when its names differ from the wanted ones, when it is not signed by the
//     current signing CA, or once RenewFraction [80%] of its lifetime has passed.
//   - The CA (ECDSA P-256, [10 years]) is rotated once RenewFraction of its lifetime has passed:
//     a new CA is first added to the published bundle (old + new); the serving certificate is
//     signed by it only after the bundle holding it has been published for Overlap [24h], since
//     machines created from older pointer configs trust only the old CA. An old CA leaves the
//     bundle once it has expired. The signing CA is always the bundle's first certificate, for
//     clients that read only the first (Ignition before v2).
//   - Every time a decision depends on and cannot be read from a certificate (when the bundle
//     first held a CA) is recorded in an annotation of the bundle, never in memory, so a
//     restarted controller decides the same.
//   - Objects without the managed label, or written by cert-manager, are someone else's: the
//     core then writes nothing at all (a half-managed set would serve a certificate machines do
//     not trust).
package servingcert
