package server

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
)

// TestRunWarnsWhileUnauthenticatedAllowed: the server says at start that it serves pools
// without a token to anyone, and says nothing of the kind by default.
func TestRunWarnsWhileUnauthenticatedAllowed(t *testing.T) {
	for _, allow := range []bool{true, false} {
		var logs bytes.Buffer
		err := Run(context.Background(), func(context.Context, *Store) error { return nil }, Options{
			Listen:               ListenOptions{InsecureAddress: "127.0.0.1:0"},
			AllowUnauthenticated: allow,
			Log:                  slog.New(slog.NewTextHandler(&logs, nil)),
		})
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(logs.String(), "level=WARN") && strings.Contains(logs.String(), "anyone who can reach the port")
		if warned != allow {
			t.Errorf("AllowUnauthenticated=%v: warned %v\n%s", allow, warned, logs.String())
		}
	}
}
