// Package etcdindex is the pure core of seed 003's etcd member index templating: a master
// machine asks the Machine Config Server for /config/master?etcd_index=N, and the pool's file
// contents, unit contents and dropins that refer to the index are executed as Go text templates
// with etcd_index = N before they are served. The node agent applies the same function to every
// config it loads on such a machine (the server leaves the index in IndexPath), so what the
// first boot wrote and what the agent checks and writes later agree; render checks the same
// contents with the same function.
//
// What is templated, and what is not:
//   - a content is a template only when one of its actions names the index ({{.etcd_index}},
//     {{ $.etcd_index }}, {{if eq .etcd_index 0}}...; RefersToIndex). Every other content is
//     never parsed and stays byte for byte what it was, whatever braces it holds: OpenShift's
//     on-prem Corefile.tmpl and haproxy.cfg.tmpl are Go templates for the static pods that read
//     them, and OpenShift serves them as they are;
//   - inline data: sources, plain, base64 or gzip-compressed (decompressed, executed,
//     compressed again), of files' contents and appends; unit contents; dropin contents;
//   - remote sources (http, https, s3, gs, tftp, arweave) are left untouched: the machine
//     fetches them itself and the server never sees their bytes, so there is nothing to execute;
//   - a file with contents.verification.hash whose content refers to the index is an error:
//     executing would change the bytes the hash pins, and Ignition would refuse the file.
//
// A content that refers to the index is executed whole, so its other braces are the author's to
// escape: literal braces are written {{"{{"}} there (and {{"{{.DNSUpstreams}}"}} writes a
// foreign action), while content that does not refer to the index needs no escaping at all.
// Its actions may refer to etcd_index alone: any other field (.DNSUpstreams, a typo like
// .etcd_idx) is refused in every branch, not only the one an index takes, so a check with one
// index stands for all. Templates are a safe subset of text/template, so serving stays linear
// in the config's size whatever a MachineConfig holds: text, {{.etcd_index}} and other
// pipelines over it, variables, if/else, with, comments, and the functions and, or, not, eq,
// ne, lt, le, gt, ge and print. range, define, block and template (loops and recursion) and
// every other function (printf's width alone could allocate gigabytes) are refused with an
// error naming the content.
package etcdindex
