// Package doctest runs the shell blocks of README and docs/ as a user would type them, against
// the dev clusters of the whole-system tests, and compares the output the docs show.
//
// Every fenced block of a shell language (sh, bash, shell, console), and every transcript (a block
// without a language whose first line is a `$ ` prompt), in a checked page carries an
// annotation, an HTML comment on the line before it that GitHub does not render:
//
//	<!-- doctest: ID [exit=N] [timeout=DURATION] -->   run by the test that names ID
//	<!-- doctest: skip: REASON -->                      not run, and why
//
// A run block's ID is unique across the pages and must be named by a test in test/e2e (or run
// here, offline); a bare fenced block right after it is the output it shows, compared line by
// line (see MatchOutput). A block runs verbatim in bash (-e -o pipefail) in a working directory
// that mirrors the checkout, with only the placeholders its Session documents substituted.
package doctest
