package report

import (
	"fmt"
	"math"
	"strings"
	"testing"
)

// TestNoLengthEnough: said once for the rows no run length makes testable,
// naming the first five and counting the rest, with the range of what the
// test sees at best; "for all N rows" when it applies to every row given;
// "" when it applies to none, and never under the rank test.
func TestNoLengthEnough(t *testing.T) {
	d := &Diff{RunSpread: 0.05}
	var rows []DiffRow
	for i := range 8 {
		longer := math.Inf(1)
		if i == 0 {
			longer = 2 // testable with runs twice as long
		}
		rows = append(rows, DiffRow{By: ByName, Key: fmt.Sprintf("/r%d", i), Longer: longer, atLength: 0.20 + 0.01*float64(i)})
	}
	got := d.NoLengthEnough(rows)
	want := "no run length is enough for k6_name=/r1, k6_name=/r2, k6_name=/r3, k6_name=/r4, k6_name=/r5, 2 more rows: with the between-run spread (σ 5.0% per run) alone the test sees +21.0% to +27.0% at best;"
	if !strings.HasPrefix(got, want) {
		t.Errorf("got  %q\nwant %q…", got, want)
	}
	if got := d.NoLengthEnough(rows[1:3]); !strings.HasPrefix(got, "no run length is enough for all 2 rows: ") {
		t.Errorf("every row: %q", got)
	}
	if got := d.NoLengthEnough(rows[:1]); got != "" {
		t.Errorf("a testable row: %q, want none", got)
	}
	d.RankTest = true
	if got := d.NoLengthEnough(rows); got != "" {
		t.Errorf("rank test: %q, want none", got)
	}
}
