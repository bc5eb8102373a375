package profiletest

import (
	"context"
	"runtime/pprof"
	"testing"
	"time"
)

//go:noinline
func labelledWork() { Spin(200 * time.Millisecond) }

func TestRecordSeesLabels(t *testing.T) {
	p := Record(t, func() {
		pprof.Do(context.Background(), pprof.Labels("k6_scenario", "a"), func(context.Context) { labelledWork() })
	})
	samples := Samples(p, "labelledWork")
	if len(samples) == 0 {
		t.Fatal("no samples in labelledWork")
	}
	for _, s := range samples {
		if got := Labels(s)["k6_scenario"]; got != "a" {
			t.Fatalf("sample labels %v, want k6_scenario=a", Labels(s))
		}
	}
	CheckLabels(t, p, 256)
}
