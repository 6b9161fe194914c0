package image

import (
	"encoding/json"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
)

// instruction is one Containerfile instruction, continuation lines joined.
type instruction struct{ cmd, args string }

func parseContainerfile(t *testing.T, file string) []instruction {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur string
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "#") || (trimmed == "" && cur == "") {
			continue
		}
		cur += " " + strings.TrimSuffix(trimmed, "\\")
		if strings.HasSuffix(trimmed, "\\") {
			continue
		}
		cmd, args, _ := strings.Cut(strings.TrimSpace(cur), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		cur = ""
	}
	return out
}

// TestContainerfileAgrees checks that the Containerfile's runtime stage and the image `make image`
// builds hold the same: the same Debian release and packages, the binaries at the same paths,
// the same user, entrypoint and labels, the same nonroot user.
func TestContainerfileAgrees(t *testing.T) {
	all := parseContainerfile(t, "../../../Containerfile")
	last := -1
	for i, in := range all {
		if in.cmd == "FROM" {
			last = i
		}
	}
	if last < 0 {
		t.Fatal("Containerfile has no FROM")
	}
	stage := all[last:]
	if want := "debian:" + Release + "-slim"; !strings.HasSuffix(stage[0].args, want) {
		t.Errorf("runtime stage FROM %s, want ...%s", stage[0].args, want)
	}
	var pkgs, copied []string
	labels := map[string]string{}
	var runs string
	for _, in := range stage[1:] {
		switch in.cmd {
		case "RUN":
			runs += in.args + "\n"
			for _, cmd := range strings.Split(in.args, "&&") {
				f := strings.Fields(cmd)
				if i := slices.Index(f, "install"); len(f) > 0 && f[0] == "apt-get" && i > 0 {
					for _, a := range f[i+1:] {
						if !strings.HasPrefix(a, "-") {
							pkgs = append(pkgs, a)
						}
					}
				}
			}
		case "COPY":
			f := strings.Fields(in.args)
			if len(f) < 3 || !strings.HasPrefix(f[0], "--from=") || f[len(f)-1] != "/usr/bin/" {
				t.Errorf("COPY %s: want COPY --from=build <binaries> /usr/bin/", in.args)
				continue
			}
			for _, src := range f[1 : len(f)-1] {
				copied = append(copied, path.Base(src))
			}
		case "USER":
			if in.args != User {
				t.Errorf("USER %s, the image has %s", in.args, User)
			}
		case "ENTRYPOINT":
			var ep []string
			if err := json.Unmarshal([]byte(in.args), &ep); err != nil || !slices.Equal(ep, []string{Entrypoint}) {
				t.Errorf("ENTRYPOINT %s, the image has [%q]", in.args, Entrypoint)
			}
		case "LABEL":
			for _, kv := range strings.Fields(in.args) {
				k, v, _ := strings.Cut(kv, "=")
				labels[k] = v
			}
		}
	}
	if !slices.Equal(pkgs, Wanted) {
		t.Errorf("the Containerfile installs %v, the image's lock %v", pkgs, Wanted)
	}
	if !slices.Equal(copied, Binaries) {
		t.Errorf("the Containerfile copies %v to /usr/bin, the image %v", copied, Binaries)
	}
	if want := Labels("${VERSION}", "${COMMIT}"); !mapsEqual(labels, want) {
		t.Errorf("the Containerfile labels %v, the image %v", labels, want)
	}
	for _, line := range []string{NonrootPasswd, NonrootGroup} {
		if !strings.Contains(runs, "'"+line+"'") {
			t.Errorf("the Containerfile does not add %q", line)
		}
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}
