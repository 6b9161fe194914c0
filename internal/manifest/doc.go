// Package manifest loads MachineConfig and MachineConfigPool manifests from disk for the offline
// commands (`mco render`, `mco validate`).
//
// Input rules, so an admin can predict what is read:
//   - Paths are files or directories; directories are walked recursively in lexical order,
//     skipping entries whose name starts with "." (.git and editor files), and only files ending
//     in .yaml, .yml, .json or .bu are read. A file named explicitly must have one of those
//     endings too.
//   - .yaml/.yml/.bu files may hold several documents separated by "---"; .json files hold one
//     or more JSON values one after the other. Documents are numbered from 1 in file order,
//     as apimachinery's reader (kubectl's) splits them: a leading "---" does not start a
//     document; a comment-only document is skipped but keeps its number.
//   - Decoding is strict: unknown and duplicate fields are errors.
//   - Supported kinds are MachineConfig and MachineConfigPool (machineconfiguration.openshift.io/v1)
//     and List / MachineConfigList / MachineConfigPoolList of them (what `kubectl get -o yaml`
//     writes). Any other kind is an error rather than silently skipped: a typo in a kind would
//     otherwise drop a config from the render without a word.
//   - A document whose top level has a "variant" key is a Butane config (see butane.go).
//   - Two MachineConfigs (or two pools) with the same name are an error naming both places.
//
// Every problem is reported as "file:document: field: reason", with the line and column when
// they are known, and Load reports all problems it finds, not only the first.
package manifest
