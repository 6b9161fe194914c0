package systemd

import (
	"context"
	"strings"
	"testing"
)

// TestCommandLines pins what the agent runs: on the host itself enablement goes through the
// running systemd; with the host's root mounted elsewhere it is edited offline, and live
// actions are chrooted.
func TestCommandLines(t *testing.T) {
	for _, tc := range []struct {
		root string
		do   func(context.Context, *Systemctl) error
		want string
	}{
		{"/", func(ctx context.Context, s *Systemctl) error { return s.Enable(ctx, "a.service", "b.service") }, "systemctl enable -- a.service b.service"},
		{"/rootfs", func(ctx context.Context, s *Systemctl) error { return s.Enable(ctx, "a.service") }, "systemctl --root=/rootfs enable -- a.service"},
		{"/", func(ctx context.Context, s *Systemctl) error { return s.Disable(ctx, "a.service") }, "systemctl disable -- a.service"},
		{"/rootfs", func(ctx context.Context, s *Systemctl) error { return s.Preset(ctx, "a.service") }, "systemctl --root=/rootfs preset -- a.service"},
		{"/", func(ctx context.Context, s *Systemctl) error { _, err := s.IsEnabled(ctx, "a.service"); return err }, "systemctl is-enabled -- a.service"},
		{"/rootfs", func(ctx context.Context, s *Systemctl) error { _, err := s.IsEnabled(ctx, "a.service"); return err }, "systemctl --root=/rootfs is-enabled -- a.service"},
		{"/", func(ctx context.Context, s *Systemctl) error { return s.Restart(ctx, "a.service") }, "systemctl restart -- a.service"},
		{"/rootfs", func(ctx context.Context, s *Systemctl) error { return s.Reload(ctx, "a.service") }, "chroot /rootfs systemctl reload -- a.service"},
		{"/", func(ctx context.Context, s *Systemctl) error { return s.DaemonReload(ctx) }, "systemctl daemon-reload"},
	} {
		var got []string
		s := &Systemctl{Root: tc.root, Run: func(_ context.Context, name string, args ...string) ([]byte, error) {
			got = append(got, name+" "+strings.Join(args, " "))
			return []byte("enabled\n"), nil
		}}
		if err := tc.do(context.Background(), s); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("root %s: ran %q, want %q", tc.root, got, tc.want)
		}
	}
}
