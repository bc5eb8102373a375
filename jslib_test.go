package k6labels

import (
	"context"
	"maps"
	"testing"
)

// The header lines of k6's http-instrumentation-pyroscope helper as each
// version writes them: 1.0.2 joins with "," and puts a script's own baggage
// first, 1.0.1 joined with ", ". Both give the same labels, and a tags.name
// with a space (sent unencoded) is kept as it is.
func TestJslibVersions(t *testing.T) {
	t.Parallel()
	l := NewLabeler(WithRegistry(NewRegistry(0)))
	url := map[string]string{"k6_test_run_id": "4242", "k6_scenario": "rush_hour", "k6_name": "http://127.0.0.1:8080/car"}
	named := map[string]string{"k6_test_run_id": "4242", "k6_scenario": "rush_hour", "k6_name": "order bike"}
	own := map[string]string{"k6_my_tag": "x", "k6_test_run_id": "4242", "k6_scenario": "rush_hour", "k6_name": "order bike"}
	for _, c := range []struct {
		version, line string
		want          map[string]string
	}{
		{"1.0.2", "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=http://127.0.0.1:8080/car?vehicle_id=7&city=berlin", url},
		{"1.0.1", "k6.test_run_id=4242, k6.scenario=rush_hour, k6.name=http://127.0.0.1:8080/car?vehicle_id=7&city=berlin", url},
		{"1.0.2", "k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike", named},
		{"1.0.1", "k6.test_run_id=4242, k6.scenario=rush_hour, k6.name=order bike", named},
		{"1.0.2", "k6.my-tag=x,tenant=acme,k6.test_run_id=4242,k6.scenario=rush_hour,k6.name=order bike", own},
	} {
		ctx, ok := l.Labels(context.Background(), []string{c.line})
		if got := labelsOf(ctx); !ok || !maps.Equal(got, c.want) {
			t.Errorf("helper %s line %q: labels %v (ok %v), want %v", c.version, c.line, got, ok, c.want)
		}
	}
}
