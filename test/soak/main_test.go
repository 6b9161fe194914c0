package soak

import (
	"os"
	"testing"

	"github.com/mco-dev/mco/test/clustertest"
)

func TestMain(m *testing.M) { os.Exit(clustertest.Main(m, clustertest.SoakSlot)) }
