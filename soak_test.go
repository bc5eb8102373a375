package k6labels

import (
	"os"
	"strconv"
	"testing"
)

// soak reports whether the exhaustive tests run at full size:
// K6LABELS_SOAK=1, as `make soak` sets. Without it they run a smaller,
// spread sample of the same inputs with the same assertions, so that
// `make test` stays within its time budget under -race.
func soak() bool {
	v, _ := strconv.ParseBool(os.Getenv("K6LABELS_SOAK"))
	return v
}

// pick returns full under soak and small otherwise.
func pick(small, full int) int {
	if soak() {
		return full
	}
	return small
}

// TestPick pins the switch: K6LABELS_SOAK=1 selects the full sizes.
func TestPick(t *testing.T) {
	t.Setenv("K6LABELS_SOAK", "1")
	if got := pick(1, 2); got != 2 {
		t.Errorf("with K6LABELS_SOAK=1: pick(1, 2) = %d, want 2", got)
	}
	t.Setenv("K6LABELS_SOAK", "")
	if got := pick(1, 2); got != 1 {
		t.Errorf("without K6LABELS_SOAK: pick(1, 2) = %d, want 1", got)
	}
}
