// Package etcdindex is the pure core of seed 003's etcd member index templating: a master
// machine asks the Machine Config Server for /config/master?etcd_index=N, and the pool's file
// contents, unit contents and dropins are executed as Go text templates with etcd_index = N
// before they are served. The node agent applies the same function to every config it loads on
// such a machine (the server leaves the index in IndexPath), so what the first boot wrote and
// what the agent checks and writes later agree.
//
// What is templated, and what is not:
//   - inline data: sources, plain, base64 or gzip-compressed (decompressed, executed,
//     compressed again), of files' contents and appends; unit contents; dropin contents;
//   - content without "{{" is never parsed, so it stays byte for byte what it was;
//   - remote sources (http, https, s3, gs, tftp, arweave) are left untouched: the machine
//     fetches them itself and the server never sees their bytes, so there is nothing to execute;
//   - a file with contents.verification.hash whose content has template actions is an error:
//     executing would change the bytes the hash pins, and Ignition would refuse the file.
//
// Templates are a safe subset of text/template, so serving stays linear in the config's size
// whatever a MachineConfig holds: text, {{.etcd_index}} and other pipelines over the data,
// variables, if/else, with, comments, and the functions and, or, not, eq, ne, lt, le, gt, ge
// and print. range, define, block and template (loops and recursion) and every other function
// (printf's width alone could allocate gigabytes) are refused with an error naming the
// content. A reference to anything but etcd_index is an error (missingkey=error), so a typo
// fails the request instead of serving "<no value>". Literal braces are written {{"{{"}}.
package etcdindex
