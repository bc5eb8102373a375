package k6results_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/k6labels/k6labels/cmd/k6labels/internal/fixture"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// TestSummaryRefused: k6's --summary-export file of a real run, and a
// handleSummary JSON.stringify(data) (one line, metrics with "type"), are
// refused as summaries with the outputs to use, not as broken json.
func TestSummaryRefused(t *testing.T) {
	_, err := k6results.ReadFile(filepath.Join(fixture.Dir(t), "k6", "run-fx1-summary.json"))
	if !errors.Is(err, k6results.ErrSummary) || !errors.Is(err, k6results.ErrFormat) || !strings.Contains(err.Error(), "--out json=FILE or --out csv=FILE") {
		t.Errorf("--summary-export file: %v", err)
	}
	handleSummary := `{"root_group":{"name":"","path":"","id":"d41d8cd98f00b204e9800998ecf8427e","groups":[],"checks":[]},` +
		`"options":{"summaryTrendStats":["avg","min","med","max","p(90)","p(95)"],"summaryTimeUnit":"","noColor":false},` +
		`"state":{"isStdOutTTY":false,"isStdErrTTY":false,"testRunDurationMs":15004.1},` +
		`"metrics":{"http_reqs":{"type":"counter","contains":"default","values":{"count":7273,"rate":484.7}}}}`
	_, err = k6results.Read(strings.NewReader(handleSummary))
	if !errors.Is(err, k6results.ErrSummary) {
		t.Errorf("handleSummary json: %v", err)
	}
}
