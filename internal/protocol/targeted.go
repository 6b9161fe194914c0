package protocol

import (
	"strings"
	"time"
)

// The value of rollout.mco.dev/targeted (rolloutv1.TargetedAnnotation), which the node
// controller writes in the same patch that gives a node a new desiredConfig: what the pool's
// UpdateStalled condition times a node's update from, so a rollout that stops moving always has
// a reason the pool reports.

const targetedSep = " at "

// Targeted is the annotation's value for config given at at.
func Targeted(config string, at time.Time) string {
	return config + targetedSep + at.UTC().Format(time.RFC3339)
}

// ParseTargeted reads the annotation's value; ok is false for anything Targeted did not write.
func ParseTargeted(v string) (config string, at time.Time, ok bool) {
	config, when, found := strings.Cut(v, targetedSep)
	if !found || config == "" {
		return "", time.Time{}, false
	}
	at, err := time.Parse(time.RFC3339, when)
	return config, at, err == nil
}
