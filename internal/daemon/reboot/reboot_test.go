package reboot

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestSystemdRebootCommandLine(t *testing.T) {
	for _, tc := range []struct {
		root, want string
	}{
		{"/", "systemd-run --unit machine-config-daemon-reboot --description machine-config-daemon: Node will reboot into config x --property=Restart=on-failure --property=RestartSec=5s /bin/sh -c systemctl reboot"},
		{"/host", "chroot /host systemd-run --unit machine-config-daemon-reboot --description machine-config-daemon: Node will reboot into config x --property=Restart=on-failure --property=RestartSec=5s /bin/sh -c systemctl reboot"},
	} {
		var got string
		run := func(_ context.Context, name string, args ...string) ([]byte, error) {
			got = strings.Join(append([]string{name}, args...), " ")
			return nil, nil
		}
		if err := (Systemd{Root: tc.root, Run: run}).Reboot(context.Background(), "Node will reboot into config x"); err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("root %s:\n got %s\nwant %s", tc.root, got, tc.want)
		}
	}
}

func TestSystemdRebootFailureNamesTheCommand(t *testing.T) {
	run := func(context.Context, string, ...string) ([]byte, error) {
		return []byte("Failed to start transient service unit"), errors.New("exit status 1")
	}
	err := (Systemd{Root: "/", Run: run}).Reboot(context.Background(), "r")
	if err == nil || !strings.Contains(err.Error(), "queueing reboot") || !strings.Contains(err.Error(), "Failed to start transient service unit") {
		t.Fatalf("error %v", err)
	}
}
