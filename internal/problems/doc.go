// Package problems reports what is wrong in the admin's manifests, and what Ignition only warns
// about in them, at the file and document each came from, the way `mco validate`, `mco render`
// and `mco plan` print them: one per line, in file order, each once.
package problems
