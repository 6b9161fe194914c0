package daemon

import (
	"os"
	"testing"
	"time"
)

var packageLoaded = time.Now()

// TestProcessStart: this test process started before its package was initialised, and not
// long before (to a clock tick), where /proc/stat's whole-second btime was up to a second off.
func TestProcessStart(t *testing.T) {
	started, err := processStart("/proc", os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if started.After(packageLoaded.Add(startTimeSlack)) || started.Before(packageLoaded.Add(-10*time.Second)) {
		t.Fatalf("process start %v, package initialised at %v", started, packageLoaded)
	}
}
