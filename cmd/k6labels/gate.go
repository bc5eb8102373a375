package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/k6labels/k6labels/cmd/k6labels/report"
)

// errInconclusive is returned by diff when --fail-above could not tell.
var errInconclusive = errors.New("inconclusive")

// parseFailAbove parses --fail-above: a finite percentage with its % sign,
// 0% or more ("" is off: −1). A bare number is refused, so that 0.4 is
// never read as 0.4% when 40% was meant.
func parseFailAbove(s string) (float64, error) {
	if s == "" {
		return -1, nil
	}
	num, ok := strings.CutSuffix(strings.TrimSpace(s), "%")
	if !ok {
		return 0, fmt.Errorf("--fail-above %q: want a percentage with its %% sign, such as 10%% (a bare number is ambiguous: 0.4 could mean 0.4%% or 40%%)", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("--fail-above %q: want a finite percentage of 0%% or more, such as 10%%", s)
	}
	return v / 100, nil
}

// inconclusive returns errInconclusive, naming the rows, when the diff
// could not have seen a change of threshold in some row, could not test a
// row with CPU, or compared the rows with their common change and that
// change is above threshold.
func inconclusive(d *report.Diff, threshold float64, failAbove string) error {
	var why []string
	if d.UniformAbove(threshold) {
		u := d.Uniform
		why = append(why, fmt.Sprintf("every route moved together, %s (%s … %s): a slower machine or a change on a path every request takes, which the diff cannot tell apart (--normalize none gates on it as a regression)",
			report.Change(u.Change), report.Change(u.Low), report.Change(u.High)))
	}
	rows := d.Inconclusive()
	for i, r := range rows {
		if i == 5 {
			why = append(why, fmt.Sprintf("and %d more rows", len(rows)-5))
			break
		}
		seen := "sees " + report.Change(r.Detectable) + " at best"
		if math.IsInf(r.Detectable, 1) {
			seen = "cannot be tested with so few runs"
		}
		if d.NoLength(&r) {
			why = append(why, fmt.Sprintf("%s=%s %s", strings.Join(r.By, ","), r.Key, seen))
		} else {
			why = append(why, fmt.Sprintf("%s=%s %s; %s", strings.Join(r.By, ","), r.Key, seen, d.TestableAfter(&r)))
		}
	}
	untested := d.Untested()
	for i, r := range untested {
		if i == 5 {
			why = append(why, fmt.Sprintf("and %d more untested rows", len(untested)-5))
			break
		}
		why = append(why, fmt.Sprintf("%s=%s has %s, not tested", strings.Join(r.By, ","), r.Key, d.UntestedWhy(&r)))
	}
	if s := d.NoLengthEnough(rows); s != "" {
		why = append(why, s)
	}
	if len(why) == 0 {
		return nil
	}
	return fmt.Errorf("%w: no regression found, but the diff cannot vouch for %s: %s (--allow-inconclusive accepts this)", errInconclusive, failAbove, strings.Join(why, "; "))
}
