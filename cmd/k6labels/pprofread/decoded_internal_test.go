package pprofread

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestDecodedSizeOfFixtures: the recorded real profiles are estimated at
// a few times their size, far below decodedFactor times a limit that
// holds them.
func TestDecodedSizeOfFixtures(t *testing.T) {
	for _, f := range []string{"local/fx4.cpu.pb.gz", "profiles/fx1.cpu.pb.gz", "profiles/fx2.cpu.pb.gz"} {
		raw, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", f))
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		est := decodedSize(data)
		t.Logf("%s: %d bytes, estimated %d decoded (%.1f×)", f, len(data), est, float64(est)/float64(len(data)))
		if est == 0 || est > 16*int64(len(data)) {
			t.Errorf("%s: %d bytes estimated at %d decoded", f, len(data), est)
		}
	}
}
