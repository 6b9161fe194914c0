// Command image builds mco's container image without a container engine or a registry
// (`make image`), or pins its Debian packages anew (`make image-lock`). See internal/dev/image.
//
//	go run ./hack/image [-out bin/mco-image.tar] [-version V] [-commit C]   # build
//	go run ./hack/image lock                                                  # re-pin debian.lock
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"time"

	"github.com/mco-dev/mco/internal/dev/image"
)

func main() {
	lockFile := flag.String("lock", "hack/image/debian.lock", "the lock file of the base layer's Debian packages")
	out := flag.String("out", "bin/mco-image.tar", "where to write the docker-archive")
	binDir := flag.String("bin", "bin/image", "directory holding the image's mco (tag nodev), mco-node and mco-server (`make build`)")
	version := flag.String("version", "dev", "image tag and version label (besides :latest)")
	commit := flag.String("commit", "unknown", "revision label")
	cache := flag.String("cache", "", "where fetched .debs are kept (default $XDG_CACHE_HOME/mco/debs)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *cache == "" {
		dir, err := image.DefaultCache()
		if err != nil {
			fail(err)
		}
		*cache = dir
	}
	var err error
	switch flag.Arg(0) {
	case "", "build":
		err = build(ctx, *lockFile, *cache, image.Inputs{BinDir: *binDir, Version: *version, Commit: *commit}, *out)
	case "lock":
		err = lock(ctx, *lockFile, *cache)
	default:
		err = fmt.Errorf("unknown command %q (want build or lock)", flag.Arg(0))
	}
	if err != nil {
		fail(err)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "image:", err)
	os.Exit(1)
}

func build(ctx context.Context, lockFile, cache string, in image.Inputs, out string) error {
	data, err := os.ReadFile(lockFile)
	if err != nil {
		return err
	}
	l, err := image.ParseLock(lockFile, data)
	if err != nil {
		return err
	}
	if err := l.Current(lockFile); err != nil {
		return err
	}
	// The binaries are built for this machine; the base layer must be of the same architecture.
	if l.Arch != runtime.GOARCH {
		return fmt.Errorf("%s pins %s packages, but the binaries are built for %s", lockFile, l.Arch, runtime.GOARCH)
	}
	if in.Epoch, err = sourceDateEpoch(); err != nil {
		return err
	}
	m, err := image.HostMirrors(ctx)
	if err != nil {
		return err
	}
	debs, err := image.Fetch(ctx, l, m, cache)
	if stale := (*image.StaleLockError)(nil); errors.As(err, &stale) {
		// A user's build stays reproducible from the committed lock: no silent re-pinning here.
		return fmt.Errorf("%s is stale: %w", lockFile, err)
	}
	if err != nil {
		return err
	}
	if in.Base, err = image.BaseTree(ctx, debs); err != nil {
		return err
	}
	in.Arch = l.Arch
	img, err := image.Build(in)
	if err != nil {
		return err
	}
	if err := image.WriteArchive(out, img, in.Version); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	id, err := img.ConfigName()
	if err != nil {
		return err
	}
	tags, _ := image.Tags(in.Version)
	// Two names for one image: a registry knows it by its manifest's digest; docker, podman and
	// ctr, which make their own manifest when they load an archive, by its config's (image ID).
	fmt.Printf("%s: %v\ndigest   %s (manifest: a registry's, pushed with crane)\nimage ID %s (config: the IMAGE ID docker and podman show after loading)\n", out, tags, digest, id)
	return nil
}

// sourceDateEpoch is SOURCE_DATE_EPOCH (reproducible-builds.org), or the Unix epoch.
func sourceDateEpoch() (time.Time, error) {
	s := os.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil || sec < 0 {
		return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH=%q: want seconds since 1970", s)
	}
	return time.Unix(sec, 0).UTC(), nil
}

func lock(ctx context.Context, lockFile, cache string) error {
	m, err := image.HostMirrors(ctx)
	if err != nil {
		return err
	}
	l, err := image.WriteResolved(ctx, m, runtime.GOARCH, cache, lockFile)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %d packages of Debian %s for %v\n", lockFile, len(l.Packages), l.Release, l.Wanted)
	return nil
}
