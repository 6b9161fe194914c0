package render

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	v3_5 "github.com/coreos/ignition/v2/config/v3_5"
	"github.com/coreos/ignition/v2/config/v3_5/types"
	"k8s.io/utils/ptr"

	"github.com/mco-dev/mco/internal/ignition"
)

// libraryMerge is the reference: Ignition's own merge folded over every config.
func libraryMerge(cfgs []ignition.Config) ignition.Config {
	merged := ignition.Empty()
	for _, cfg := range cfgs {
		merged = v3_5.Merge(merged, withExplicitCompression(cfg))
	}
	finishMerge(&merged)
	return merged
}

// withExplicitCompression is cfg with the merge's compression marker on every file, on a copy
// of the file list.
func withExplicitCompression(cfg ignition.Config) ignition.Config {
	files := make([]types.File, len(cfg.Storage.Files))
	for i, f := range cfg.Storage.Files {
		files[i] = withCompressionMarker(f)
	}
	cfg.Storage.Files = files
	return cfg
}

// randomConfig draws from a small key space so paths and unit names collide often, across the
// file/directory/link lists too.
func randomConfig(r *rand.Rand) ignition.Config {
	cfg := ignition.Empty()
	paths := []string{"/etc/a", "/etc/b", "/etc/c", "/etc/d", "/var/e"}
	for _, p := range paths {
		switch r.IntN(6) {
		case 0:
			f := types.File{}
			f.Path = p
			f.Contents.Source = ptr.To(fmt.Sprintf("data:,%d", r.IntN(100)))
			if r.IntN(3) == 0 {
				f.Contents.Compression = ptr.To("gzip")
			}
			if r.IntN(3) == 0 {
				f.Mode = ptr.To(0o600 + r.IntN(3))
			}
			if r.IntN(4) == 0 {
				f.Append = []types.Resource{{Source: ptr.To("data:,x")}}
			}
			cfg.Storage.Files = append(cfg.Storage.Files, f)
		case 1:
			d := types.Directory{}
			d.Path = p
			d.Mode = ptr.To(0o755)
			cfg.Storage.Directories = append(cfg.Storage.Directories, d)
		case 2:
			l := types.Link{}
			l.Path = p
			l.Target = ptr.To("/etc/target")
			cfg.Storage.Links = append(cfg.Storage.Links, l)
		}
	}
	for _, name := range []string{"a.service", "b.service", "c.service"} {
		if r.IntN(2) == 0 {
			u := types.Unit{Name: name}
			if r.IntN(2) == 0 {
				u.Contents = ptr.To(fmt.Sprintf("[Service]\nExecStart=/bin/%d\n", r.IntN(10)))
			}
			if r.IntN(2) == 0 {
				u.Enabled = ptr.To(r.IntN(2) == 0)
			}
			if r.IntN(2) == 0 {
				u.Dropins = []types.Dropin{{Name: fmt.Sprintf("%d.conf", r.IntN(3)), Contents: ptr.To("[Unit]\n")}}
			}
			cfg.Systemd.Units = append(cfg.Systemd.Units, u)
		}
	}
	if r.IntN(3) == 0 {
		cfg.Passwd.Users = []types.PasswdUser{{Name: "core", SSHAuthorizedKeys: []types.SSHAuthorizedKey{types.SSHAuthorizedKey(fmt.Sprintf("key-%d", r.IntN(4)))}}}
	}
	return cfg
}

func TestKeyedMergeMatchesLibrary(t *testing.T) {
	for seed := uint64(0); seed < 500; seed++ {
		r := rand.New(rand.NewPCG(seed, seed*7919))
		cfgs := make([]ignition.Config, 1+r.IntN(8))
		for i := range cfgs {
			cfgs[i] = randomConfig(r)
		}
		// Compared as JSON: the library leaves an empty, non-nil list where every entry was
		// replaced, we leave nil; nothing downstream (output, hash) can tell them apart.
		got, want := jsonOf(mergeIgnition(cfgs)), jsonOf(libraryMerge(cfgs))
		if got != want {
			t.Fatalf("seed %d: keyed merge differs from Ignition's\n got: %s\nwant: %s", seed, got, want)
		}
	}
}

func TestParseCacheIsTransparent(t *testing.T) {
	cache := NewParseCache(2)
	good := rawMC("00-a", "worker", ign35+`,"storage":{"files":[{"path":"/etc/a","contents":{"source":"data:,a"}}]}}`)
	bad := rawMC("10-b", "worker", ign35+`,"storage":{"files":[{"path":"/etc/b","mode":4095}]}}`)
	for range 3 { // twice from the cache, and past the size limit
		if _, err := cache.Parse(good); err != nil {
			t.Fatal(err)
		}
		if _, err := cache.Parse(bad); err == nil {
			t.Fatal("cached parse lost the validation error")
		}
		other := bad.DeepCopy()
		other.Name = "20-c"
		if _, err := cache.Parse(other); err == nil || !strings.Contains(err.Error(), `"20-c"`) {
			t.Fatalf("errors must name the MachineConfig asked about, not the one cached: %v", err)
		}
	}
}
