// Package report splits the CPU of k6-labelled profiles by k6 test run,
// scenario and request name, and, with k6's own results, tells the CPU that
// one request of each row cost, with a 95% interval from the sample count.
// [NewDiff] compares two reports and tells which rows got costlier beyond
// sampling noise.
//
// The profiles come from a [Source]: pprof CPU profiles whose samples carry
// the labels (package pprofsource), or a Pyroscope server, whose merged
// profiles carry none, so that each grouping is one query (package pyrosource).
package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"github.com/k6labels/k6labels"
	"github.com/k6labels/k6labels/cmd/k6labels/stats"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/google/pprof/profile"
	"github.com/k6labels/k6labels/cmd/k6labels/k6results"
)

// The pprof labels k6labels sets from k6's baggage members, named by the
// middleware's own rule ([k6labels.LabelName]).
var (
	LabelRunID    = labelOf("k6.test_run_id")
	LabelScenario = labelOf("k6.scenario")
	LabelName     = labelOf("k6.name")
)

// labelOf returns the label name of baggage key k; it panics for a key
// the middleware makes no label of.
func labelOf(k string) string {
	name, ok := k6labels.LabelName(k)
	if !ok {
		panic("k6labels makes no label of baggage key " + k)
	}
	return name
}

// A Grouping is the labels whose values make the rows of one table.
type Grouping []string

// The groupings a report can have, in the order it shows them.
var (
	ByRun          = Grouping{LabelRunID}
	ByScenario     = Grouping{LabelScenario}
	ByName         = Grouping{LabelName}
	ByScenarioName = Grouping{LabelScenario, LabelName}
)

// AllGroupings are the four groupings, the default of [Options.By].
var AllGroupings = []Grouping{ByRun, ByScenario, ByName, ByScenarioName}

// String returns the labels joined by ",", as in the json output.
func (g Grouping) String() string { return strings.Join(g, ",") }

// ParseGroupings parses a --by list such as "scenario,name,scenario+name":
// run, scenario, name and scenario+name (or scenario×name), comma-separated.
func ParseGroupings(s string) ([]Grouping, error) {
	var out []Grouping
	for part := range strings.SplitSeq(s, ",") {
		var g Grouping
		switch strings.TrimSpace(part) {
		case "run", LabelRunID:
			g = ByRun
		case "scenario", LabelScenario:
			g = ByScenario
		case "name", LabelName:
			g = ByName
		case "scenario+name", "scenario×name", "scenario*name":
			g = ByScenarioName
		default:
			return nil, fmt.Errorf("--by: unknown grouping %q: use run, scenario, name or scenario+name, comma-separated", part)
		}
		if !slices.ContainsFunc(out, func(h Grouping) bool { return slices.Equal(g, h) }) {
			out = append(out, g)
		}
	}
	return out, nil
}

// LocalRun stands for the run id of samples that carry k6_scenario or
// k6_name but no k6_test_run_id: a plain local k6 run, whose "undefined" run
// id the middleware drops. It is a key of [Source] Totals, never a label.
const LocalRun = "(local run, no test run id)"

// A Matcher selects the samples whose label Name has Value; an empty Value
// selects the samples without that label. Not selects the others.
type Matcher struct {
	Name, Value string
	Not         bool
}

// runMatchers returns the matcher sets whose samples together are run id's:
// one set for a test run id, two disjoint ones for [LocalRun].
func runMatchers(id string) [][]Matcher {
	if id != LocalRun {
		return [][]Matcher{{{Name: LabelRunID, Value: id}}}
	}
	return [][]Matcher{
		{{Name: LabelRunID}, {Name: LabelScenario, Not: true}},
		{{Name: LabelRunID}, {Name: LabelScenario}, {Name: LabelName, Not: true}},
	}
}

// runScope returns the matcher that, with a k6_scenario or k6_name value,
// selects run id's samples.
func runScope(id string) Matcher {
	if id == LocalRun {
		return Matcher{Name: LabelRunID}
	}
	return Matcher{Name: LabelRunID, Value: id}
}

// A Count is CPU in profiler samples and in time.
type Count struct {
	Samples int64
	CPU     time.Duration
}

// Plus returns the sum of c and d.
func (c Count) Plus(d Count) Count { return Count{c.Samples + d.Samples, c.CPU + d.CPU} }

// Minus returns c less d, each of the two no less than 0.
func (c Count) Minus(d Count) Count {
	return Count{max(c.Samples-d.Samples, 0), max(c.CPU-d.CPU, 0)}
}

// A Source gives the CPU profiles that a report splits. Its methods are
// called from one goroutine.
type Source interface {
	// String describes the source in the report's header.
	String() string
	// Totals returns the CPU in the source by k6_test_run_id value; that of
	// samples with k6_scenario or k6_name but no run id under [LocalRun],
	// that of samples without any of the three labels under "".
	Totals(ctx context.Context) (map[string]Count, error)
	// Values returns the values that label has on samples in the source.
	Values(ctx context.Context, label string) ([]string, error)
	// Split returns the CPU of the samples that match every matcher of
	// scope by the values of g's labels, keyed by [TupleKey]; samples
	// without one of the labels are in no part. One pass or one query.
	Split(ctx context.Context, g Grouping, scope []Matcher) (map[string]Part, error)
	// Profile returns the merged CPU profile of the samples that match
	// every matcher; it has no samples when none match.
	Profile(ctx context.Context, match []Matcher) (*profile.Profile, error)
}

// A Part is the CPU of one value tuple of [Source.Split]: Profile holds
// its samples when the source has them at no extra cost (then Count is
// left to the caller to count), else Profile is nil and Count is set.
type Part struct {
	Count   Count
	Profile *profile.Profile
}

// TupleKey returns the key of label values in [Source.Split]'s answer.
func TupleKey(values []string) string { return strings.Join(values, "\x00") }

// Options tune [New].
type Options struct {
	By    []Grouping // the tables; nil means AllGroupings
	RunID string     // k6_test_run_id the rows are of; "" = the only one
	// K6 are k6's results of the run: with them rows show requests and CPU
	// per request. Nil makes a report of shares only.
	K6           *k6results.Results
	Top          int           // functions by self CPU per scenario row; 0 = 5, <0 = none
	TopEveryRow  bool          // top functions for every row, not only scenarios
	Confidence   float64       // of the CPU per request intervals; 0 = 0.95
	SamplePeriod time.Duration // profiler period when a profile has no sample count; 0 = 10ms (100 Hz)
	Progress     io.Writer     // progress lines while fetching; nil = none
	// Profiles fetches every row's merged profile (flame graphs, profile
	// files); else a source without them at no cost (Pyroscope) fetches
	// only those of the rows whose functions are listed.
	Profiles bool
}

func (o *Options) defaults() {
	if o.By == nil {
		o.By = AllGroupings
	}
	if o.Top == 0 {
		o.Top = 5
	}
	if o.Confidence == 0 {
		o.Confidence = 0.95
	}
	if o.SamplePeriod == 0 {
		o.SamplePeriod = 10 * time.Millisecond
	}
}

// A Func is a function's self CPU in a row.
type Func struct {
	Name  string
	CPU   time.Duration
	Share float64 // of the row's CPU
}

// An Interval is an estimate with the bounds of its confidence interval.
type Interval struct {
	Est, Low, High time.Duration
}

// A Row is the CPU of the samples whose labels have Values.
type Row struct {
	By       Grouping
	Values   []string // one per label of By
	Count             // the row's CPU
	OfAll    float64  // share of all CPU in the source
	OfK6     float64  // share of the k6-labelled CPU of the run(s) in scope
	Requests int64    // http_reqs of the row in k6's results; 0 without them
	// PerRequest is CPU / Requests with its interval; zero without
	// requests, and for a row InOverflow.
	PerRequest Interval
	// InOverflow tells that the row's k6_name is no label value while
	// k6_name=_overflow has CPU in the report's scope: the row's CPU may be
	// there (past the middleware's cap on values), so it has no PerRequest.
	InOverflow bool
	Top        []Func // functions by self CPU, most first; may be empty

	self map[string]Count // self CPU by function, for the diff
	// queries is a k6_name row's CPU by query string when its labels keep
	// them (WithQueryStrings); nil otherwise.
	queries map[string]Count
	prof    *profile.Profile // the row's merged profile, for the diff files
}

// Key returns the row's values joined by " ", its name in the text output.
func (r *Row) Key() string { return strings.Join(r.Values, " ") }

// Report is the CPU of a source split by k6 label.
type Report struct {
	Source     string
	RunID      string // k6_test_run_id (or LocalRun) the rows are of; "" = every run in the source
	Total      Count  // all CPU in the source but OtherRuns'
	Unlabelled Count  // CPU of samples without any k6 label
	K6         Count  // CPU of the run(s) in scope
	// OtherRuns is the CPU of the test runs other than RunID in the
	// source: not in Total, nor in any row or share.
	OtherRuns Count
	// Connections is the CPU of connection goroutines that labelled
	// requests started (ConnectionRow): in Total, in no k6 row.
	Connections Count
	// HasRequests tells whether k6 results were given; Requests is their
	// http_reqs total and Start, End their time range.
	HasRequests bool
	Requests    int64
	Start, End  time.Time
	Confidence  float64
	Rows        []Row
	// Unmatched are k6 request names with requests but no k6_name label
	// among the profiles' samples (a route that burns no measurable CPU, or
	// names the labels spell otherwise), by requests.
	Unmatched []Unmatched
	Notes     []string
	// Grafana, when set, links each row to Grafana Profiles Drilldown.
	Grafana *Grafana

	// Outside are the k6 requests left out as made outside the profiles'
	// time span, and K6Span the time range of all of them.
	Outside int64
	K6Span  Span

	prof  *profile.Profile // merged profile of the run(s) in scope
	fetch *fetcher         // fetches row profiles later; nil when made otherwise
	runs  []*Report        // the runs a sum of runs is of ([NewDiffRuns])
	// queries are the k6 results' requests by name and query string.
	queries map[string]*k6results.QueryMix
}

// Unmatched is a k6 request name that no k6_name label carries.
type Unmatched struct {
	Name     string
	Requests int64
}

// Errors that [New] returns wrapped, for the command's exit codes and tests.
var (
	// ErrNoData: the source has no CPU for what was asked.
	ErrNoData = errors.New("no data")
	// ErrNoMatch: none of k6's request names is a k6_name label value.
	ErrNoMatch = errors.New("k6 names match no label")
	// ErrNotCPU: a profile is not a CPU profile.
	ErrNotCPU = errors.New("not a CPU profile")
	// ErrManyRuns: the source holds several test runs and none was chosen.
	ErrManyRuns = errors.New("several test runs")
)

// New makes the report of src. It returns an error wrapping [ErrNoData]
// when src has no k6-labelled CPU (or none of opts.RunID; the error lists
// what there is), and [ErrNoMatch] when k6's names match no k6_name label.
func New(ctx context.Context, src Source, opts Options) (*Report, error) {
	opts.defaults()
	totals, err := src.Totals(ctx)
	if err != nil {
		return nil, err
	}
	r := &Report{Source: src.String(), Confidence: opts.Confidence, Unlabelled: totals[""]}
	var runs []string
	for id, c := range totals {
		r.Total = r.Total.Plus(c)
		if id == ConnectionRow {
			grpc, err := connGRPC(ctx, src)
			if err != nil {
				return nil, err
			}
			r.Connections = c
			r.Notes = append(r.Notes, connNote(c, grpc))
			continue
		}
		if id != "" {
			runs = append(runs, id)
		}
	}
	slices.Sort(runs)
	describe := func() string {
		var parts []string
		for _, id := range runs {
			parts = append(parts, fmt.Sprintf("%s (%.2fs)", id, totals[id].CPU.Seconds()))
		}
		return strings.Join(parts, ", ")
	}
	switch {
	case len(runs) == 0 && r.Total.Samples == 0:
		return nil, fmt.Errorf("%w: %s has no CPU samples at all", ErrNoData, r.Source)
	case len(runs) == 0 && r.Connections.Samples > 0:
		return nil, allConnError(r.Source, r.Connections)
	case len(runs) == 0:
		return nil, unlabelledError(src, r.Total, r.Source)
	case opts.RunID != "" && !slices.Contains(runs, opts.RunID):
		return nil, fmt.Errorf("%w: no CPU with %s=%q in %s; it has %s", ErrNoData, LabelRunID, opts.RunID, r.Source, describe())
	case opts.RunID != "":
		r.RunID = opts.RunID
	case len(runs) == 1:
		r.RunID = runs[0]
	case opts.K6 != nil:
		return nil, fmt.Errorf("%w: %s holds %d test runs: %s; pass --run-id to say which one the k6 results are of",
			ErrManyRuns, r.Source, len(runs), describe())
	default:
		r.Notes = append(r.Notes, fmt.Sprintf("rows sum over %d test runs (%s); --run-id picks one", len(runs), strings.Join(runs, ", ")))
	}
	if r.RunID == LocalRun {
		r.Notes = append(r.Notes, "the samples carry k6_scenario and k6_name but no k6_test_run_id: a local k6 run (k6 sends k6.test_run_id=undefined without K6_CLOUDRUN_TEST_RUN_ID); set K6_CLOUDRUN_TEST_RUN_ID to tell runs apart")
	}
	r.scopeToRun(runs, totals)
	var scope []Matcher
	if r.RunID != "" {
		scope = []Matcher{runScope(r.RunID)}
		r.K6 = totals[r.RunID]
	} else {
		for _, id := range runs {
			r.K6 = r.K6.Plus(totals[id])
		}
	}
	if k := opts.K6; k != nil {
		r.HasRequests, r.Requests, r.Start, r.End = true, k.Total, k.Start, k.End
		r.Outside, r.K6Span = k.Outside, Span{k.AllStart, k.AllEnd}
		r.queries = k.Queries
		if k.Truncated != nil {
			r.Notes = append(r.Notes, fmt.Sprintf("the k6 results file was still being written: %s; the requests counted are those of its complete lines", k.Truncated))
		}
		if k.LeftOut > 0 {
			r.Notes = append(r.Notes, fmt.Sprintf("%d http_reqs made outside the scenarios (setup(), teardown()) are left out of the requests: k6's helper does not label them, so their CPU is among the samples without k6 labels", k.LeftOut))
		}
	}

	b := builder{ctx: ctx, src: src, opts: &opts, r: r, scope: scope}
	if err := b.build(runs, totals); err != nil {
		return nil, err
	}
	return r, nil
}

// builder holds what New needs while it fetches rows.
type builder struct {
	ctx    context.Context
	src    Source
	opts   *Options
	r      *Report
	scope  []Matcher
	values map[string][]string
	done   int
	// conn: the rows' profiles hold connection goroutines (ConnGoroutine)
	// that Connections counts, to leave out of each row (splitConn).
	conn bool
	// connFetched counts the row profiles fetched only for that.
	connFetched int
	// variants are the k6_name labels of each row's value when the labels
	// keep query strings (foldQueries); nil when they do not.
	variants map[string][]string
}

func (b *builder) build(runs []string, totals map[string]Count) error {
	b.values = map[string][]string{}
	for _, g := range b.opts.By {
		for _, label := range g {
			if _, ok := b.values[label]; ok || label == LabelRunID {
				continue
			}
			vs, err := b.src.Values(b.ctx, label)
			if err != nil {
				return err
			}
			slices.Sort(vs)
			b.values[label] = vs
		}
	}
	b.foldQueries()
	b.matchRoutes()
	if err := b.checkNames(); err != nil {
		return err
	}
	whole := [][]Matcher{b.scope}
	if b.r.RunID != "" {
		whole = runMatchers(b.r.RunID)
	}
	var err error
	if b.r.prof, err = b.profile(whole...); err != nil {
		return err
	}
	split := b.splitConn
	if b.r.RunID == "" {
		split = func() error { return b.splitRunsConn(runs) }
	}
	if err := split(); err != nil {
		return err
	}
	for _, g := range b.opts.By {
		if slices.Equal(g, ByRun) {
			if err := b.runRows(runs, totals); err != nil {
				return err
			}
			continue
		}
		if err := b.group(g); err != nil {
			return err
		}
	}
	if b.opts.Progress != nil && b.done > 0 {
		fmt.Fprintln(b.opts.Progress)
	}
	if b.connFetched > 0 {
		b.r.Notes = append(b.r.Notes, fmt.Sprintf("finding each row's CPU of connection goroutines took one merged-profile query per row (%d): "+
			"the source splits CPU by label series, which carry no stacks, and its merged profiles carry no labels", b.connFetched))
	}
	b.markOverflow()
	slices.SortStableFunc(b.r.Rows, func(x, y Row) int {
		return cmp.Or(
			cmp.Compare(slices.IndexFunc(b.opts.By, func(g Grouping) bool { return slices.Equal(g, x.By) }),
				slices.IndexFunc(b.opts.By, func(g Grouping) bool { return slices.Equal(g, y.By) })),
			cmp.Compare(y.CPU, x.CPU), cmp.Compare(y.Requests, x.Requests), slices.Compare(x.Values, y.Values))
	})
	b.r.fetch = &fetcher{src: b.src, scope: b.scope, opts: *b.opts, conn: b.conn, variants: b.variants}
	return nil
}

// runRows adds the rows of the run grouping, from the totals.
func (b *builder) runRows(runs []string, totals map[string]Count) error {
	for _, id := range runs {
		if b.r.RunID != "" && id != b.r.RunID {
			continue // another run: not part of this report
		}
		row := Row{By: ByRun, Values: []string{id}}
		var conn Count
		var err error
		switch {
		case b.opts.TopEveryRow || b.opts.Profiles:
			conn, err = b.fill(&row, runMatchers(id)...)
		case b.conn && id == b.r.RunID:
			conn = b.r.Connections
		case b.conn:
			conn, err = b.runConn(id)
		}
		if err != nil {
			return err
		}
		if !b.opts.TopEveryRow {
			row.Count = totals[id].Minus(conn)
		}
		if b.r.HasRequests && id == b.r.RunID {
			row.Requests = b.r.Requests
		}
		b.add(row)
	}
	return nil
}

// group adds the rows of grouping g: one Split of the source's samples,
// one pass over k6's request keys, whatever the number of rows. Rows
// whose functions are listed get their profile when the Split has none.
func (b *builder) group(g Grouping) error {
	parts, err := b.src.Split(b.ctx, g, b.scope)
	if err != nil {
		return err
	}
	parts, byQuery, err := b.foldParts(g, parts)
	if err != nil {
		return err
	}
	requests, tuples := b.requestsBy(g)
	for k := range parts {
		if _, ok := tuples[k]; !ok {
			tuples[k] = strings.Split(k, "\x00")
		}
	}
	keys := slices.Sorted(maps.Keys(tuples))
	for _, k := range keys {
		row := Row{By: g, Values: tuples[k], Requests: requests[k]}
		if slices.Equal(g, ByName) {
			row.queries = byQuery[k]
		}
		if part, ok := parts[k]; ok {
			if err := b.part(&row, part); err != nil {
				return err
			}
		}
		if row.Samples > 0 || row.Requests > 0 {
			b.add(row)
		}
	}
	return nil
}

// part sets row's CPU from its part of a Split, and its functions when
// the part has a profile or the row's functions are listed.
func (b *builder) part(row *Row, part Part) error {
	if part.Profile != nil {
		b.setProfile(row, part.Profile)
		return nil
	}
	row.Count = part.Count
	listed := (slices.Equal(row.By, ByScenario) && b.opts.Top > 0) || b.opts.TopEveryRow || b.opts.Profiles
	if (!listed && !b.conn) || row.Samples == 0 {
		return nil
	}
	if !listed {
		b.connFetched++
	}
	count := row.Count
	conn, err := b.fill(row, b.rowMatch(row)...)
	if err != nil {
		return err
	}
	row.Count = count.Minus(conn)
	b.setTop(row)
	return nil
}

// requestsBy returns the http_reqs of k6's results by the tuple key of
// grouping g's values, and the tuples, in one pass over the keys.
func (b *builder) requestsBy(g Grouping) (map[string]int64, map[string][]string) {
	n, tuples := map[string]int64{}, map[string][]string{}
	if b.opts.K6 == nil {
		return n, tuples
	}
	for k, c := range b.opts.K6.Requests {
		t := make([]string, len(g))
		for i, label := range g {
			if label == LabelScenario {
				t[i] = k.Scenario
			} else {
				t[i] = k.Name
			}
		}
		key := TupleKey(t)
		n[key] += c
		tuples[key] = t
	}
	return n, tuples
}

// markOverflow marks the rows InOverflow, and adds a note, when the
// k6_name=_overflow rows have CPU: that of the name row, or else the sum of
// the scenario × name rows.
func (b *builder) markOverflow() {
	var cpu time.Duration
	for _, g := range []Grouping{ByName, ByScenarioName} {
		for _, row := range b.r.RowsBy(g) {
			if row.Values[len(g)-1] == k6labels.OverflowValue {
				cpu += row.CPU
			}
		}
		if cpu > 0 {
			break
		}
	}
	if cpu == 0 {
		return
	}
	for i := range b.r.Rows {
		row := &b.r.Rows[i]
		if n := slices.Index(row.By, LabelName); n >= 0 && !b.labelled(ByName, row.Values[n:n+1]) {
			row.InOverflow, row.PerRequest = true, Interval{}
		}
	}
	b.r.Notes = append(b.r.Notes, fmt.Sprintf("k6_name=%s holds %s of CPU: names past the middleware's cap on values per label "+
		"(WithMaxValuesPerLabel, 1000 by default) are labelled %s, so rows of k6 names without a label of their own "+
		"show no CPU per request (marked \"in %s?\"); raise the cap, or name requests in k6 with tags.name "+
		"(or by route with WithRoutePattern) so that fewer names need one", k6labels.OverflowValue, Secs(cpu), k6labels.OverflowValue, k6labels.OverflowValue))
}

// checkNames lists k6 names without a label and fails when none has one.
func (b *builder) checkNames() error {
	labels, ok := b.values[LabelName]
	if b.opts.K6 == nil || !ok {
		return nil
	}
	byName := map[string]int64{}
	for k, n := range b.opts.K6.Requests {
		byName[k.Name] += n
	}
	matched := 0
	for name, n := range byName {
		if _, ok := slices.BinarySearch(labels, name); ok {
			matched++
		} else {
			b.r.Unmatched = append(b.r.Unmatched, Unmatched{name, n})
		}
	}
	slices.SortFunc(b.r.Unmatched, func(x, y Unmatched) int {
		return cmp.Or(cmp.Compare(y.Requests, x.Requests), cmp.Compare(x.Name, y.Name))
	})
	if matched == 0 && len(labels) > 0 {
		show := func(ss []string) string {
			if len(ss) > 3 {
				return strings.Join(ss[:3], ", ") + fmt.Sprintf(" and %d more", len(ss)-3)
			}
			return strings.Join(ss, ", ")
		}
		names := slices.Sorted(maps.Keys(byName))
		return fmt.Errorf("%w: k6's results name requests %s, the k6_name labels are %s. "+
			"k6labels names a request as LabelValue(\"k6.name\", name) does (query string dropped): "+
			"a service built with WithNameFunc names them otherwise (route labels such as GET /cart/{id} are matched by k6's method tag and URL, labels with query strings by their URL without it); "+
			"use --by run,scenario to leave out the name rows", ErrNoMatch, show(names), show(labels))
	}
	return nil
}

// labelled tells whether each of vals is a value the source's samples carry
// for its label of g; a row with another value has no CPU to fetch.
func (b *builder) labelled(g Grouping, vals []string) bool {
	for i, label := range g {
		if _, ok := slices.BinarySearch(b.values[label], vals[i]); !ok {
			return false
		}
	}
	return true
}

// fill fetches the row's profile, the samples that match any of the
// matcher sets, and sets the row's CPU and functions. With b.conn the
// samples of connection goroutines are left out; it returns their CPU.
func (b *builder) fill(row *Row, matches ...[]Matcher) (Count, error) {
	b.done++
	if b.opts.Progress != nil {
		fmt.Fprintf(b.opts.Progress, "\rk6labels: profile %d: %s=%s   ", b.done, row.By, row.Key())
	}
	p, err := b.profile(matches...)
	if err != nil {
		return Count{}, err
	}
	var conn Count
	if b.conn {
		p, conn, _ = withoutConn(p, b.opts.SamplePeriod)
	}
	b.setProfile(row, p)
	return conn, nil
}

// setProfile sets the row's profile, and its CPU and functions from it.
func (b *builder) setProfile(row *Row, p *profile.Profile) {
	row.prof = p
	row.Count, row.self = countProfile(p, b.opts.SamplePeriod)
	b.setTop(row)
}

// setTop lists the row's top functions when its grouping shows them.
func (b *builder) setTop(row *Row) {
	if slices.Equal(row.By, ByScenario) || b.opts.TopEveryRow {
		row.Top = top(row.self, row.CPU, b.opts.Top)
	}
}

// rowMatch returns the matchers of row's samples within scope.
func rowMatch(scope []Matcher, row *Row) [][]Matcher {
	if slices.Equal(row.By, ByRun) {
		return runMatchers(row.Values[0])
	}
	match := slices.Clone(scope)
	for j, label := range row.By {
		match = append(match, Matcher{Name: label, Value: row.Values[j]})
	}
	return [][]Matcher{match}
}

// profile returns the merged profile of the samples that match any of the
// matcher sets; the sets must select disjoint samples.
func (b *builder) profile(matches ...[]Matcher) (*profile.Profile, error) {
	var ps []*profile.Profile
	for _, m := range matches {
		p, err := b.src.Profile(b.ctx, m)
		if err != nil {
			return nil, err
		}
		if len(p.Sample) > 0 || len(ps) == 0 {
			ps = append(ps, p)
		}
	}
	if len(ps) == 1 {
		return ps[0], nil
	}
	p, err := profile.Merge(ps)
	if err != nil {
		return nil, fmt.Errorf("merging %d profiles: %w", len(ps), err)
	}
	return p, nil
}

func (b *builder) add(row Row) {
	row.OfAll = Ratio(float64(row.CPU), float64(b.r.Total.CPU))
	row.OfK6 = Ratio(float64(row.CPU), float64(b.r.K6.CPU))
	if row.Requests > 0 {
		row.PerRequest = perRequest(row.Count, row.Requests, b.opts.Confidence, b.opts.SamplePeriod)
	}
	b.r.Rows = append(b.r.Rows, row)
}

// perRequest returns c.CPU / requests with the interval that c.Samples, a
// Poisson count, gives it: both ends of the count's interval times the CPU
// of one sample, divided by the requests (exact: k6 counted them).
func perRequest(c Count, requests int64, confidence float64, period time.Duration) Interval {
	low, high := stats.PoissonInterval(c.Samples, confidence)
	perSample := float64(period)
	if c.Samples > 0 {
		perSample = float64(c.CPU) / float64(c.Samples)
	}
	n := float64(requests)
	return Interval{
		Est:  time.Duration(float64(c.CPU) / n),
		Low:  time.Duration(low * perSample / n),
		High: time.Duration(high * perSample / n),
	}
}

// CPUIndex returns the index of the cpu/nanoseconds sample value, or -1.
func CPUIndex(p *profile.Profile) int {
	return slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool {
		return st.Type == "cpu" && st.Unit == "nanoseconds"
	})
}

// CountIndex returns the index of the samples/count sample value, or -1.
func CountIndex(p *profile.Profile) int {
	return slices.IndexFunc(p.SampleType, func(st *profile.ValueType) bool {
		return st.Type == "samples" && st.Unit == "count"
	})
}

// countProfile returns p's CPU and its self CPU by function. Samples are
// counted from the samples/count value when p has one (runtime/pprof), else
// as CPU / period (Pyroscope's merged profiles).
func countProfile(p *profile.Profile, period time.Duration) (Count, map[string]Count) {
	self := map[string]Count{}
	ci, ni := CPUIndex(p), CountIndex(p)
	if ci < 0 {
		return Count{}, self
	}
	var total Count
	for _, s := range p.Sample {
		c := Count{CPU: time.Duration(s.Value[ci])}
		if ni >= 0 {
			c.Samples = s.Value[ni]
		} else {
			c.Samples = int64((c.CPU + period/2) / period)
		}
		total = total.Plus(c)
		fn := selfFunc(s)
		self[fn] = self[fn].Plus(c)
	}
	return total, self
}

// top returns the n functions with the most self CPU.
func top(self map[string]Count, total time.Duration, n int) []Func {
	if n <= 0 {
		return nil
	}
	out := make([]Func, 0, len(self))
	for name, c := range self {
		if c.CPU > 0 {
			out = append(out, Func{Name: name, CPU: c.CPU, Share: Ratio(float64(c.CPU), float64(total))})
		}
	}
	slices.SortFunc(out, func(a, b Func) int { return cmp.Or(cmp.Compare(b.CPU, a.CPU), cmp.Compare(a.Name, b.Name)) })
	return out[:min(n, len(out))]
}

// Ratio returns a/b, or 0 when b is 0.
func Ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// RowsBy returns the rows of grouping g, in the report's order.
func (r *Report) RowsBy(g Grouping) []Row {
	var out []Row
	for _, row := range r.Rows {
		if slices.Equal(row.By, g) {
			out = append(out, row)
		}
	}
	return out
}

// Row returns the row of grouping g with the given values, or nil.
func (r *Report) Row(g Grouping, values ...string) *Row {
	for i := range r.Rows {
		if slices.Equal(r.Rows[i].By, g) && slices.Equal(r.Rows[i].Values, values) {
			return &r.Rows[i]
		}
	}
	return nil
}

// Profile returns the merged CPU profile of the run(s) the report is of.
func (r *Report) Profile() *profile.Profile { return r.prof }

// RunName names the run r is of (k6_test_run_id=ID, or LocalRun), or
// returns all when r is of every run in its source.
func (r *Report) RunName(all string) string {
	switch r.RunID {
	case "":
		return all
	case LocalRun:
		return LocalRun
	}
	return LabelRunID + "=" + r.RunID
}
