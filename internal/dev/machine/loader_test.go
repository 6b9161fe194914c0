package machine

import "testing"

func TestChooseImage(t *testing.T) {
	for _, tc := range []struct {
		name           string
		boot, staged   string
		last           LoaderState
		want           string
		consumedStaged bool
	}{
		{name: "new disk boots the boot image", boot: "os:1", want: "os:1"},
		{name: "last booted image boots again", boot: "os:1", last: LoaderState{Image: "os:2"}, want: "os:2"},
		{name: "staged image wins", boot: "os:1", last: LoaderState{Image: "os:2"}, staged: "os:3\n", want: "os:3", consumedStaged: true},
		{name: "blank staging is ignored", boot: "os:1", last: LoaderState{Image: "os:2"}, staged: " \n", want: "os:2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := ChooseImage(tc.boot, tc.last, tc.staged)
			if got.Image != tc.want || got.ConsumedStaged != tc.consumedStaged {
				t.Fatalf("got %+v, want image %q consumed %v", got, tc.want, tc.consumedStaged)
			}
		})
	}
}

func TestCmdline(t *testing.T) {
	if got := Cmdline("", false); got != DefaultCmdline {
		t.Fatalf("absent: %q", got)
	}
	if got := Cmdline("root=x  rw\naudit=1\n", true); got != "root=x rw audit=1" {
		t.Fatalf("written: %q", got)
	}
	if got := Cmdline("", true); got != "" {
		t.Fatalf("empty file is an empty command line, got %q", got)
	}
}
