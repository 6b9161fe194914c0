package image

import (
	"strings"
	"testing"
)

const goodLock = `# comment
release trixie
arch amd64
want systemd
pkg systemd 257.13-1~deb13u1 debian pool/main/s/systemd/systemd_257.13-1~deb13u1_amd64.deb 3000 ` + sum64 + `
pkg libattr1 1:2.5.2-3 debian-security pool/main/a/attr/libattr1_2.5.2-3_amd64.deb 20 ` + sum64 + `
`

const sum64 = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestParseLock(t *testing.T) {
	l, err := ParseLock("debian.lock", []byte(goodLock))
	if err != nil {
		t.Fatal(err)
	}
	if l.Release != "trixie" || l.Arch != "amd64" || len(l.Packages) != 2 || l.Packages[1].Version != "1:2.5.2-3" || l.Packages[1].Archive != ArchiveSecurity {
		t.Fatalf("parsed %+v", l)
	}
	// Format then parse gives the same lock, packages sorted by name.
	again, err := ParseLock("debian.lock", l.Format())
	if err != nil {
		t.Fatal(err)
	}
	if again.Packages[0].Name != "libattr1" || again.Packages[1] != l.Packages[0] {
		t.Fatalf("round trip: %+v", again.Packages)
	}

	line := func(old, new string) string { return strings.Replace(goodLock, old, new, 1) }
	for _, tc := range []struct{ name, lock, want string }{
		{"unknown keyword", goodLock + "frob x\n", `debian.lock:7: unknown keyword "frob"`},
		{"short pkg", line(" 3000 ", " "), "debian.lock:5: pkg: want 6 fields"},
		{"bad sha", line(sum64+"\npkg", "abc\npkg"), `debian.lock:5: pkg: package systemd: sha256 "abc" is not 64`},
		{"bad archive", line(" debian pool/main/s", " ubuntu pool/main/s"), `package systemd: archive "ubuntu" is neither`},
		{"path escapes pool", line("pool/main/s/systemd/", "pool/../../etc/"), `package systemd: "pool/../../etc/systemd_257.13-1~deb13u1_amd64.deb" is not a pool/... .deb path`},
		{"bad size", line(" 3000 ", " -1 "), `package systemd: size "-1" is not a positive number`},
		{"twice", goodLock + "pkg systemd 1 debian pool/main/s/x.deb 1 " + sum64 + "\n", "debian.lock:7: pkg: package systemd is pinned twice"},
		{"wanted not pinned", line("want systemd", "want systemd coreutils"), "debian.lock: wanted package coreutils is not pinned"},
		{"no release", line("release trixie\n", ""), "debian.lock: no release line"},
		{"no arch", line("arch amd64\n", ""), "debian.lock: no arch line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseLock("debian.lock", []byte(tc.lock))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestLockCurrent(t *testing.T) {
	l := Lock{Release: Release, Wanted: Wanted}
	if err := l.Current("debian.lock"); err != nil {
		t.Fatal(err)
	}
	l.Wanted = []string{"systemd"}
	if err := l.Current("debian.lock"); err == nil || !strings.Contains(err.Error(), "make image-lock") {
		t.Fatalf("a lock for other packages: %v", err)
	}
}

func TestParsePrintURIs(t *testing.T) {
	m := Mirrors{Debian: "http://mirror/debian/", Security: "http://mirror/debian-security/"}
	out := "'http://mirror/debian/pool/main/a/attr/libattr1_1%3a2.5.2-3_amd64.deb' libattr1_1%3a2.5.2-3_amd64.deb 100 MD5Sum:x\n" +
		"'http://mirror/debian-security/pool/main/o/openssl/libssl3t64_3.5.9-1~deb13u1_amd64.deb' libssl3t64_3.5.9-1~deb13u1_amd64.deb 100 MD5Sum:x\n"
	archives, pins, err := parsePrintURIs([]byte(out), m)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pins, " ") != "libattr1=1:2.5.2-3 libssl3t64=3.5.9-1~deb13u1" || archives["libssl3t64"] != ArchiveSecurity || archives["libattr1"] != ArchiveDebian {
		t.Fatalf("pins %v archives %v", pins, archives)
	}
	if _, _, err := parsePrintURIs([]byte("'http://elsewhere/x_1_amd64.deb' x_1_amd64.deb 1 MD5Sum:x"), m); err == nil || !strings.Contains(err.Error(), "neither mirror") {
		t.Fatalf("a package from another mirror: %v", err)
	}
}
