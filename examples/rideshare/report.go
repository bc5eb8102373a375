package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
)

// The labels k6labels sets from k6's baggage members.
const (
	labelRunID    = "k6_test_run_id"
	labelScenario = "k6_scenario"
	labelName     = "k6_name"
)

// A row is the CPU that carried one value of a label.
type row struct {
	value string
	cpu   time.Duration
	share float64 // of all CPU in the profile
	ofK6  float64 // of the CPU that carried this label at all
	work  float64 // share of the route work the driver asked for under this value; -1 if unknown
}

// A report is the CPU of a profile split by k6 label.
type report struct {
	samples    int64
	total      time.Duration
	unlabelled time.Duration // samples without any k6 label
	runIDs     []row
	scenarios  []row
	names      []row
}

// cpuIndex returns the index of the CPU time sample value in p, falling back
// to the last sample type (where runtime/pprof puts it).
func cpuIndex(p *profile.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			return i
		}
	}
	return len(p.SampleType) - 1
}

// countIndex returns the index of the sample count in p, or -1. A pprof
// sample record stands for every sample with the same stack and labels, so
// it may count many samples.
func countIndex(p *profile.Profile) int {
	for i, st := range p.SampleType {
		if st.Type == "samples" && st.Unit == "count" {
			return i
		}
	}
	return -1
}

// sampleCount returns how many profiler samples s stands for.
func sampleCount(p *profile.Profile, s *profile.Sample) int64 {
	if i := countIndex(p); i >= 0 {
		return s.Value[i]
	}
	return 1
}

// newReport splits p's CPU by k6 label. sent, when not nil, holds the
// responses the driver got, and target the base URL it sent them to: with
// them each row also shows the share of route work that was asked for under
// that value, which is what its share of k6-labelled CPU should come close to.
func newReport(p *profile.Profile, sent *counts, target string) *report {
	r := &report{}
	if len(p.SampleType) == 0 {
		return r
	}
	ci := cpuIndex(p)
	by := map[string]map[string]time.Duration{labelRunID: {}, labelScenario: {}, labelName: {}}
	withLabel := map[string]time.Duration{}
	for _, s := range p.Sample {
		v := time.Duration(s.Value[ci])
		r.samples += sampleCount(p, s)
		r.total += v
		labelled := false
		for key, m := range by {
			if vals := s.Label[key]; len(vals) > 0 {
				m[vals[0]] += v
				withLabel[key] += v
				labelled = true
			}
		}
		if !labelled {
			r.unlabelled += v
		}
	}

	var workScenario, workName map[string]float64
	if sent != nil {
		workScenario, workName = map[string]float64{}, map[string]float64{}
		for sc, paths := range sent.bySP {
			for path, n := range paths {
				w := float64(n) * float64(routeUnits(path))
				workScenario[sc] += w
				workName[target+path] += w
			}
		}
	}
	r.runIDs = rows(by[labelRunID], r.total, withLabel[labelRunID], nil)
	r.scenarios = rows(by[labelScenario], r.total, withLabel[labelScenario], workScenario)
	r.names = rows(by[labelName], r.total, withLabel[labelName], workName)
	return r
}

// rows turns CPU by value into rows sorted by CPU, most first. Values that
// received work but no CPU are listed too, so a missing label shows.
func rows(cpu map[string]time.Duration, total, labelled time.Duration, work map[string]float64) []row {
	var sumWork float64
	for v, w := range work {
		sumWork += w
		if _, ok := cpu[v]; !ok {
			cpu[v] = 0
		}
	}
	out := make([]row, 0, len(cpu))
	for v, d := range cpu {
		rw := row{value: v, cpu: d, share: ratio(float64(d), float64(total)), ofK6: ratio(float64(d), float64(labelled)), work: -1}
		if work != nil {
			rw.work = ratio(work[v], sumWork)
		}
		out = append(out, rw)
	}
	slices.SortFunc(out, func(a, b row) int {
		return cmp.Or(cmp.Compare(b.cpu, a.cpu), cmp.Compare(a.value, b.value))
	})
	return out
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// write prints the report as tables.
func (r *report) write(w io.Writer) {
	if r.samples == 0 {
		fmt.Fprintln(w, "The profile has no samples: nothing ran long enough to be sampled.")
		return
	}
	withWork := len(r.scenarios) > 0 && r.scenarios[0].work >= 0
	width := len("(no k6 labels)")
	for _, rs := range [][]row{r.scenarios, r.names} {
		for _, rw := range rs {
			width = max(width, len(rw.value))
		}
	}
	table := func(label string, rs []row) {
		head := fmt.Sprintf("  %-*s  %9s  %8s  %8s", width, label, "CPU", "of all", "of k6")
		if withWork {
			head += fmt.Sprintf("  %9s", "work sent")
		}
		fmt.Fprintln(w, head)
		for _, rw := range rs {
			line := fmt.Sprintf("  %-*s  %9s  %7.1f%%  %7.1f%%", width, rw.value, seconds(rw.cpu), 100*rw.share, 100*rw.ofK6)
			if withWork && rw.work >= 0 {
				line += fmt.Sprintf("  %8.1f%%", 100*rw.work)
			}
			fmt.Fprintln(w, line)
		}
		fmt.Fprintf(w, "  %-*s  %9s  %7.1f%%\n", width, "(no k6 labels)", seconds(r.unlabelled), 100*ratio(float64(r.unlabelled), float64(r.total)))
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "CPU time by k6 label (%s of CPU in %d samples)\n\n", seconds(r.total), r.samples)
	table(labelScenario, r.scenarios)
	table(labelName, r.names)
	for _, rw := range r.runIDs {
		fmt.Fprintf(w, "  %s=%s on %.1f%% of all CPU\n", labelRunID, rw.value, 100*rw.share)
	}
	if len(r.runIDs) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "  of all          share of all the CPU the process used")
	fmt.Fprintln(w, "  of k6           share of the CPU that carries this label")
	if withWork {
		fmt.Fprintln(w, "  work sent       share of the route work the load asked for (a car costs 3 bikes);")
		fmt.Fprintln(w, "                  \"of k6\" comes close to it when every request is labelled right")
	}
	fmt.Fprintln(w, "  (no k6 labels)  the load driver, HTTP plumbing and Go runtime in this same process")
}

// seconds formats d as seconds with two decimals.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// pprofCommands returns the go tool pprof commands that explore the profile
// at path, focused on the given scenario.
func pprofCommands(path, scenario string) string {
	var b strings.Builder
	q := shellQuote(path)
	fmt.Fprintf(&b, "  go tool pprof -tags %s\n", q)
	fmt.Fprintf(&b, "  go tool pprof -top -tagfocus=%s=%s %s\n", labelScenario, scenario, q)
	fmt.Fprintf(&b, "  go tool pprof -http=127.0.0.1:0 -tagfocus=%s=/car %s\n", labelName, q)
	return b.String()
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-/+:@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
