package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/mco-dev/mco/internal/dev/machine"
)

// LoadImage imports a container image archive (docker-archive or OCI, as `make image` writes
// bin/mco-image.tar) into the containerd of every running machine of the dev cluster in dir,
// as `kind load image-archive` does: no registry, the image is there for pods that name it
// with imagePullPolicy Never or IfNotPresent. containerd keeps it on the machine's disk, so it
// survives reboots.
func LoadImage(ctx context.Context, dir, archive string) error {
	st, err := LoadState(dir)
	if err != nil {
		return err
	}
	if _, err := os.Stat(archive); err != nil {
		return err
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var errs []error
	for _, name := range st.Machines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := loadInto(ctx, MachineDir(dir, name), archive); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("machine %s: %w", name, err))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func loadInto(ctx context.Context, mdir, archive string) error {
	f, err := os.Open(archive)
	if err != nil {
		return err
	}
	defer f.Close()
	// The CRI's namespace and snapshotter (see containerdConf): pods find it unpacked.
	cmd, err := machine.Command(ctx, mdir, "ctr", "-n", "k8s.io", "images", "import", "--snapshotter", "native", "-")
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stdin, cmd.Stderr = f, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("ctr images import %s: %w: %s", archive, err, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// loadIntoRunning imports archive into the machine if it runs. A machine that is down, or goes
// down during the import (a reboot of a rollout), is not an error: every boot imports the
// archives its OS image binds (mco-dev-images.service), which Upgrade rebinds first.
func loadIntoRunning(ctx context.Context, mdir, archive string) error {
	if ms, err := machine.ReadStatus(mdir); err != nil || ms.State != machine.Running {
		return nil
	}
	err := loadInto(ctx, mdir, archive)
	if ms, serr := machine.ReadStatus(mdir); err != nil && serr == nil && ms.State != machine.Running {
		return nil
	}
	return err
}
