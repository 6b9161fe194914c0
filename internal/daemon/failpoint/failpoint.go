// Package failpoint lets crash tests stop the agent at a chosen step: SIGKILL, pause or hold
// at the N-th Hit.
//
// The failpoints exist only in builds with the tag BuildTag (failpoint_on.go): `make test`
// and `make chaos` build the agent they run that way. Every other build, the release agent's
// among them, gets failpoint_off.go: Hit and Load do nothing and inline away, and no
// environment variable or file can arm anything, so nobody with write access to a node's /run
// can make its agent kill itself in the middle of a transaction. The names below stay in every
// build: the tests that arm a failpoint refer to them, whatever they were built with.
//
// A test arms it with an environment variable (an agent started by the test or by a unit), or,
// for an agent in a pod, which a test cannot give an environment of its own per node, with
// ArmFile on the node's root: the agent reads and removes it when it starts, so it fires once
// per arming (a restarted agent recovers instead of dying at the same step again).
package failpoint

// BuildTag is the build tag that compiles the failpoints in.
const BuildTag = "failpoints"

// KillAtEnv: the N-th Hit (1-based) kills the process with SIGKILL, like a power cut.
const KillAtEnv = "MCO_DAEMON_KILL_AT"

// PauseAtEnv: the N-th Hit creates PausedFile and blocks forever, so a test can cut a whole
// machine's power at that step.
const PauseAtEnv = "MCO_DAEMON_PAUSE_AT"

// HoldAtEnv: the N-th Hit creates PausedFile and blocks until the process gets SIGTERM (its pod
// replaced, the node shutting down), then records the release in FiredFile and returns: a step
// that was still running when the stop came.
const HoldAtEnv = "MCO_DAEMON_HOLD_AT"

// Files on the node's root: PausedFile is created when the agent pauses; ArmFile holds
// NAME=N lines (KillAtEnv, PauseAtEnv, HoldAtEnv); FiredFile records a kill ("killed KILL <unix time>")
// or a hold's release ("held N released TERM <unix time>")
// just before it happens, as a unit's ExecStopPost would.
const (
	PausedFile = "/run/mco-daemon-paused"
	ArmFile    = "/run/mco-daemon-failpoint"
	// FiredFile outlives a reboot (not in /run): a test reads it after the node went on.
	FiredFile = "/var/lib/mco-daemon-failpoint-fired"
)
