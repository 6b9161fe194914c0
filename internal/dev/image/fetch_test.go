package image

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fakeMirror serves files by URL path; anything else gets status (404 unless set).
type fakeMirror struct {
	files  map[string][]byte
	status int
}

func (f *fakeMirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if data, ok := f.files[r.URL.Path]; ok {
		w.Write(data)
		return
	}
	status := f.status
	if status == 0 {
		status = http.StatusNotFound
	}
	http.Error(w, http.StatusText(status), status)
}

func fakePackage(name, archive string, data []byte) Package {
	sum := sha256.Sum256(data)
	return Package{Name: name, Version: "1.0-1", Archive: archive, Filename: "pool/main/x/" + name + "/" + name + "_1.0-1_amd64.deb", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

// TestFetchStaleLock points Fetch, and so apt-helper, at a fake mirror on 127.0.0.1 that has
// some pinned files and not others: only "not found" makes the typed error TestImage falls back
// on, naming every missing package; a server error, a refused connection or a wrong file stay
// plain failures.
func TestFetchStaleLock(t *testing.T) {
	if _, err := os.Stat("/usr/lib/apt/apt-helper"); err != nil {
		t.Fatal("Fetch downloads with apt's apt-helper, which make image needs too (apt-get install apt):", err)
	}
	// apt retries a refused connection or a server error (Acquire::Retries, 3 with back-off:
	// seconds); once is enough here.
	conf := filepath.Join(t.TempDir(), "apt.conf")
	if err := os.WriteFile(conf, []byte("Acquire::Retries \"0\";\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("APT_CONFIG", conf)
	a, b, c, d := []byte("deb a"), []byte("deb b"), []byte("deb c"), []byte("deb d")
	lock := Lock{Release: Release, Arch: "amd64", Packages: []Package{
		fakePackage("a", ArchiveDebian, a),
		fakePackage("b", ArchiveDebian, b),
		fakePackage("c", ArchiveSecurity, c),
		fakePackage("d", ArchiveSecurity, d),
	}}
	served := func(pkgs ...int) map[string][]byte {
		files := map[string][]byte{}
		for _, i := range pkgs {
			p := lock.Packages[i]
			files["/"+p.Archive+"/"+p.Filename] = [][]byte{a, b, c, d}[i]
		}
		return files
	}
	mirrorsOf := func(srv *httptest.Server) Mirrors {
		return Mirrors{Debian: srv.URL + "/debian/", Security: srv.URL + "/debian-security/"}
	}

	t.Run("all there", func(t *testing.T) {
		srv := httptest.NewServer(&fakeMirror{files: served(0, 1, 2, 3)})
		defer srv.Close()
		cache := t.TempDir()
		paths, err := Fetch(t.Context(), lock, mirrorsOf(srv), cache)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range paths {
			if want := filepath.Join(cache, lock.Packages[i].SHA256+".deb"); p != want {
				t.Errorf("path %d: %s, want %s", i, p, want)
			}
		}
	})

	for _, status := range []int{http.StatusNotFound, http.StatusGone} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			srv := httptest.NewServer(&fakeMirror{files: served(0, 2), status: status})
			defer srv.Close()
			cache := t.TempDir()
			_, err := Fetch(t.Context(), lock, mirrorsOf(srv), cache)
			var stale *StaleLockError
			if !errors.As(err, &stale) {
				t.Fatalf("error %v (%T), want a *StaleLockError", err, err)
			}
			if got := stale.Names(); !slices.Equal(got, []string{"b 1.0-1", "d 1.0-1"}) {
				t.Errorf("gone %v, want b and d", got)
			}
			for _, want := range []string{"b 1.0-1 (" + srv.URL + "/debian/pool/main/x/b/", "d 1.0-1 (" + srv.URL + "/debian-security/pool/main/x/d/", "make image-lock"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			// What the mirror still has is fetched and cached all the same.
			for _, p := range []Package{lock.Packages[0], lock.Packages[2]} {
				if _, err := os.Stat(filepath.Join(cache, p.SHA256+".deb")); err != nil {
					t.Errorf("%s not cached: %v", p.Name, err)
				}
			}
		})
	}

	notStale := func(t *testing.T, m Mirrors, want string) {
		t.Helper()
		_, err := Fetch(t.Context(), lock, m, t.TempDir())
		var stale *StaleLockError
		if err == nil || errors.As(err, &stale) || !strings.Contains(err.Error(), want) {
			t.Fatalf("error %v (%T), want a plain error saying %q", err, err, want)
		}
	}
	t.Run("server error", func(t *testing.T) {
		srv := httptest.NewServer(&fakeMirror{files: served(0, 2, 3), status: http.StatusInternalServerError})
		defer srv.Close()
		notStale(t, mirrorsOf(srv), "fetching package b 1.0-1")
	})
	t.Run("wrong file", func(t *testing.T) {
		files := served(0, 2, 3)
		files["/debian/"+lock.Packages[1].Filename] = []byte("not b")
		srv := httptest.NewServer(&fakeMirror{files: files})
		defer srv.Close()
		notStale(t, mirrorsOf(srv), "Hash Sum mismatch")
	})
	t.Run("no mirror", func(t *testing.T) {
		srv := httptest.NewServer(&fakeMirror{})
		m := mirrorsOf(srv)
		srv.Close()
		notStale(t, m, "fetching package a 1.0-1")
	})
}

func TestNotOnMirror(t *testing.T) {
	for _, tc := range []struct {
		name, out string
		want      bool
	}{
		{"404", "Err:1 http://deb.debian.org/debian/pool/main/c/coreutils/coreutils_9.0-1_amd64.deb\n  404  Not Found [IP: 203.0.113.80 80]\n" +
			"E: Failed to fetch http://deb.debian.org/debian/pool/main/c/coreutils/coreutils_9.0-1_amd64.deb  404  Not Found [IP: 203.0.113.80 80]\nE: Download Failed\n", true},
		{"410", "E: Failed to fetch http://m/debian/pool/x.deb  410  Gone [IP: 127.0.0.1 80]\n", true},
		{"500", "E: Failed to fetch http://m/debian/pool/x.deb  500  Internal Server Error [IP: 127.0.0.1 80]\n", false},
		{"refused", "E: Failed to fetch http://127.0.0.1:1/x.deb  Could not connect to 127.0.0.1:1 (127.0.0.1). - connect (111: Connection refused)\n", false},
		// A size of 404 bytes in a hash report is no status.
		{"hash", "E: Failed to fetch http://m/x.deb  Hash Sum mismatch\n   Hashes of received file:\n    - Filesize:404 [weak]\n", false},
		{"empty", "", false},
	} {
		if got := notOnMirror([]byte(tc.out)); got != tc.want {
			t.Errorf("%s: notOnMirror = %v, want %v", tc.name, got, tc.want)
		}
	}
}
